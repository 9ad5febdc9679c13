//! What adding or removing one zone costs beside many: a [`ZoneSet`] of N zones (and a
//! [`NameMap`] of N entries, the shape of the control plane's writers' map and of the
//! engine's access table) takes one zone more and one less, as `ternctl zone-add` and
//! `zone-remove` make the control plane do. Prints the median time of each change over
//! a few rounds, and how long the first set took to build.
//! `cargo run --release -p tern-zone --example zone_set_change -- [N] [ROUNDS]`
//! (default 1,000,000 zones, 21 rounds)
use std::sync::Arc;
use std::time::{Duration, Instant};

use tern_wire::Name;
use tern_zone::hash::SuffixHashes;
use tern_zone::{NameMap, ZoneSet, ZoneSlot};

fn main() {
    let mut args = std::env::args().skip(1).map(|a| a.parse::<usize>().ok());
    let zones = args.next().flatten().unwrap_or(1_000_000);
    let rounds = args.next().flatten().unwrap_or(21).max(1);
    let names: Vec<Name> = (0..zones).filter_map(|i| name(&format!("z{i}.example."))).collect();
    let started = Instant::now();
    let set = ZoneSet::new(names.iter().map(|n| Arc::new(ZoneSlot::new(n))).collect());
    let built = started.elapsed();
    let mut map = NameMap::new();
    for n in &names {
        map.insert((n.clone(), [0usize; 2]));
    }
    let (mut add, mut remove, mut map_add, mut map_remove) = (vec![], vec![], vec![], vec![]);
    for round in 0..rounds {
        let Some(extra) = name(&format!("added{round}.example.")) else { return };
        let started = Instant::now();
        let bigger = set.with(Arc::new(ZoneSlot::new(&extra)));
        add.push(started.elapsed());
        let started = Instant::now();
        let smaller = bigger.without(&extra);
        remove.push(started.elapsed());
        assert_found(&bigger, &extra, true);
        assert_found(&smaller, &extra, false);
        let started = Instant::now();
        let mut copy = map.clone();
        copy.insert((extra.clone(), [round; 2]));
        map_add.push(started.elapsed());
        let started = Instant::now();
        let mut fewer = copy.clone();
        fewer.remove(&extra);
        map_remove.push(started.elapsed());
    }
    println!("{zones} zones: built in {:.1} ms", ms(built));
    println!("zone set: add one {:.3} ms, remove one {:.3} ms", median(add), median(remove));
    println!(
        "name map: add one {:.3} ms, remove one {:.3} ms",
        median(map_add),
        median(map_remove)
    );
}

fn name(text: &str) -> Option<Name> {
    text.parse().ok()
}

fn assert_found(set: &ZoneSet, origin: &Name, expected: bool) {
    let found = set.find(origin, &SuffixHashes::of(origin)).is_some();
    if found != expected {
        eprintln!("{origin}: found {found}, expected {expected}");
        std::process::exit(1);
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn median(mut times: Vec<Duration>) -> f64 {
    times.sort();
    times.get(times.len() / 2).map_or(0.0, |d| ms(*d))
}
