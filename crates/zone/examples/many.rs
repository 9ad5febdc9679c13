//! Loads every zone listed in a `genzone.py hosting` directory, one after another, and
//! prints the time per zone (profiling driver for many small zones).
//! `cargo run --release -p tern-zone --example many -- DIR [COUNT]`
use std::path::Path;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = Path::new(args.get(1).map_or("/tmp/host100k", String::as_str));
    let count: usize = args.get(2).and_then(|c| c.parse().ok()).unwrap_or(2000);
    let list = std::fs::read_to_string(dir.join("zones.txt")).unwrap_or_default();
    let started = Instant::now();
    let mut loaded = 0usize;
    for origin in list.lines().take(count) {
        let Ok(name) = origin.parse::<tern_wire::Name>() else { continue };
        let file = dir.join(format!("{origin}zone"));
        if tern_zone::load_file(&file, &name, &Default::default(), &mut |_| {}).is_ok() {
            loaded += 1;
        }
    }
    let per = started.elapsed().as_micros() as f64 / count.max(1) as f64;
    println!("{loaded} zones, {per:.1} µs per zone");
}
