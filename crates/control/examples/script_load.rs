//! The time to build a zone of N hosts with a Lua script (`[[zone]] script`) against
//! the time to load the same records from a zone file (issue #54: within 2×).
//!
//! `cargo run --release -p tern-control --example script_load -- 100000 5`: N hosts,
//! rounds (interleaved); prints the best time of each and the ratio.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::str::FromStr;
use std::time::{Duration, Instant};

use tern_control::script::{run, Script};
use tern_wire::Name;

const SCRIPT: &str = "\
zone.add('@', 'SOA', 'ns hostmaster 1 3600 600 86400 60')
zone.add('@', 'NS', 'ns')
zone.add('ns', 'A', '192.0.2.53')
for i = 1, HOSTS do
  zone.add('host' .. i, 'A', '10.' .. (i // 65536 % 256) .. '.' .. (i // 256 % 256) .. '.' .. (i % 256))
end
";

fn main() {
    let mut args = std::env::args().skip(1);
    let hosts: u32 = args.next().map_or(100_000, |a| a.parse().unwrap());
    let rounds: u32 = args.next().map_or(5, |a| a.parse().unwrap());
    let dir = tempfile::tempdir().unwrap();
    let script_path = dir.path().join("zone.lua");
    std::fs::write(&script_path, SCRIPT.replace("HOSTS", &hosts.to_string())).unwrap();
    let origin = Name::from_str("example.com.").unwrap();
    let script = Script::new(script_path);
    let mut file = String::from("$ORIGIN example.com.\n");
    file.push_str("@ 3600 IN SOA ns hostmaster 1 3600 600 86400 60\n@ 3600 IN NS ns\n");
    file.push_str("ns 3600 IN A 192.0.2.53\n");
    for i in 1..=hosts {
        let (a, b, c) = (i / 65536 % 256, i / 256 % 256, i % 256);
        file.push_str(&format!("host{i} 3600 IN A 10.{a}.{b}.{c}\n"));
    }
    let file_path = dir.path().join("zone.db");
    std::fs::write(&file_path, file).unwrap();
    let (mut best_script, mut best_file) = (Duration::MAX, Duration::MAX);
    for _ in 0..rounds {
        let started = Instant::now();
        let ran = run(&script, &origin, 0).unwrap();
        best_script = best_script.min(started.elapsed());
        let started = Instant::now();
        let loaded =
            tern_zone::load_file(&file_path, &origin, &Default::default(), &mut |_| {}).unwrap();
        best_file = best_file.min(started.elapsed());
        assert_eq!(ran.contents.record_count(), loaded.contents.record_count());
        assert!(ran.contents.diff(&loaded.contents).is_some_and(|c| c.added.is_empty()));
    }
    let ratio = best_script.as_secs_f64() / best_file.as_secs_f64();
    println!(
        "{hosts} hosts: script {:.1} ms, zone file {:.1} ms, script/file {ratio:.2}",
        best_script.as_secs_f64() * 1e3,
        best_file.as_secs_f64() * 1e3
    );
}
