//! Loads a zone file and prints how long it took and how much memory the process holds.
//! `cargo run --release -p tern-zone --example load -- FILE ORIGIN`
use std::path::Path;

fn rss_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(0)
}

fn fail(e: &dyn std::fmt::Display) -> ! {
    eprintln!("load: {e}");
    std::process::exit(1);
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (Some(file), Some(origin)) = (args.get(1), args.get(2)) else {
        eprintln!("usage: load FILE ORIGIN");
        std::process::exit(2);
    };
    let origin: tern_wire::Name = match origin.parse() {
        Ok(origin) => origin,
        Err(e) => fail(&e),
    };
    let before = rss_kb();
    let loaded = tern_zone::load_file(Path::new(file), &origin, &Default::default(), &mut |p| {
        eprintln!("  {} records, {:.1}s", p.records, p.elapsed)
    });
    let loaded = loaded.unwrap_or_else(|e| fail(&e));
    println!(
        "records={} nodes={} load_s={:.2} rss_kb={} (before {before})",
        loaded.contents.record_count(),
        loaded.contents.node_count(),
        loaded.elapsed,
        rss_kb()
    );
}
