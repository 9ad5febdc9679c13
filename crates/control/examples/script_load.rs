//! The time to build a zone of N hosts with a Lua script (`[[zone]] script`) against
//! the time to load the same records from a zone file (issue #54: within 2×).
//!
//! `cargo run --release -p tern-control --example script_load -- 100000 5`: N hosts,
//! rounds (interleaved); prints the best time of each way and its ratio to the file's:
//! the CPU time of the thread (Linux's `/proc/thread-self/schedstat`, which waiting for a
//! core on a busy machine does not count), and the wall-clock time.
//! Two scripts: one as a user of `zone.a` writes it (the address an integer), one
//! building every address's text with `..` for `zone.add`. A third argument, `file`,
//! `integers` or `text`, runs that way alone (for `valgrind --tool=callgrind`).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, clippy::indexing_slicing)]

use std::path::Path;
use std::str::FromStr;
use std::time::{Duration, Instant};

use tern_control::script::{run, Script};
use tern_wire::Name;
use tern_zone::ZoneContents;

const HEAD: &str = "\
zone.add('@', 'SOA', 'ns hostmaster 1 3600 600 86400 60')
zone.add('@', 'NS', 'ns')
zone.a('ns', '192.0.2.53')
";

/// Addresses as integers: 10.0.0.0 plus the host's number.
const INTEGERS: &str = "for i = 1, HOSTS do zone.a('host' .. i, 10 << 24 | i) end\n";

/// Addresses as text.
const TEXT: &str = "\
for i = 1, HOSTS do
  zone.add('host' .. i, 'A', '10.' .. (i // 65536 % 256) .. '.' .. (i // 256 % 256) .. '.' .. (i % 256))
end
";

fn main() {
    let mut args = std::env::args().skip(1);
    let hosts: u32 = args.next().map_or(100_000, |a| a.parse().unwrap());
    let rounds: u32 = args.next().map_or(5, |a| a.parse().unwrap());
    let only = args.next();
    let dir = tempfile::tempdir().unwrap();
    let origin = Name::from_str("example.com.").unwrap();
    let script = |name: &str, body: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, format!("{HEAD}{}", body.replace("HOSTS", &hosts.to_string())))
            .unwrap();
        Script::new(path)
    };
    let scripts = [script("integers.lua", INTEGERS), script("text.lua", TEXT)];
    let file_path = dir.path().join("zone.db");
    std::fs::write(&file_path, zone_file(hosts)).unwrap();
    if let Some(way) = only {
        let origin = &origin;
        match way.as_str() {
            "file" => drop(load_file(&file_path, origin)),
            "integers" => drop(run(&scripts[0], origin, 0).unwrap()),
            "text" => drop(run(&scripts[1], origin, 0).unwrap()),
            other => panic!("{other}: file, integers or text"),
        }
        return;
    }
    let mut best = [[Duration::MAX; 2]; 3];
    for _ in 0..rounds {
        let file = timed(&mut best[2], || load_file(&file_path, &origin));
        for (i, script) in scripts.iter().enumerate() {
            let ran = timed(&mut best[i], || run(script, &origin, 0).unwrap().contents);
            assert_eq!(ran.record_count(), file.record_count());
            let change = ran.diff(&file).unwrap();
            assert!(change.added.is_empty() && change.removed.is_empty(), "{change:?}");
        }
    }
    for (clock, what) in [(0, "CPU"), (1, "wall-clock")] {
        let ms = |way: usize| best[way][clock].as_secs_f64() * 1e3;
        println!(
            "{hosts} hosts, {what}: zone file {:.1} ms; zone.a, integer addresses {:.1} ms \
             ({:.2}×); zone.add, addresses built as text {:.1} ms ({:.2}×)",
            ms(2),
            ms(0),
            ms(0) / ms(2),
            ms(1),
            ms(1) / ms(2),
        );
    }
}

/// The same records as a zone file.
fn zone_file(hosts: u32) -> String {
    let mut file = String::from("$ORIGIN example.com.\n");
    file.push_str("@ 3600 IN SOA ns hostmaster 1 3600 600 86400 60\n@ 3600 IN NS ns\n");
    file.push_str("ns 3600 IN A 192.0.2.53\n");
    for i in 1..=hosts {
        let (a, b, c) = (i / 65536 % 256, i / 256 % 256, i % 256);
        file.push_str(&format!("host{i} 3600 IN A 10.{a}.{b}.{c}\n"));
    }
    file
}

fn load_file(path: &Path, origin: &Name) -> ZoneContents {
    tern_zone::load_file(path, origin, &Default::default(), &mut |_| {}).unwrap().contents
}

/// Runs `f`, keeping the shortest CPU and wall-clock times in `best`.
fn timed<T>(best: &mut [Duration; 2], f: impl FnOnce() -> T) -> T {
    let (cpu, started) = (cpu_time(), Instant::now());
    let out = f();
    let wall = started.elapsed();
    best[0] = best[0].min(cpu_time().saturating_sub(cpu));
    best[1] = best[1].min(wall);
    out
}

/// The CPU time this thread has run (its schedstat's first field, in nanoseconds).
fn cpu_time() -> Duration {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap();
    Duration::from_nanos(stat.split_whitespace().next().unwrap().parse().unwrap())
}
