//! Copy-on-write changesets: the cost of publishing a change on a zone of one million
//! names, unsigned and signed with NSEC or NSEC3, next to the cost of building the zone.
//! The change must cost in proportion to itself, not to the zone.
//!
//! Each change is what IXFR or UPDATE brings: the SOA serial bump and the edited
//! records, and on a signed zone their new RRSIGs and the NSEC or NSEC3 records whose
//! next name changes, as a signer publishes them (`support/synth.rs`). The cases: add
//! one name, remove one name, replace one record, and a change of about 10,000 records
//! (names added and removed; its record count is printed).
//!
//! `cargo bench -p tern-zone --bench changeset` (TERN_BENCH_RECORDS sets the number of
//! names; TERN_BENCH_FORMS=unsigned,nsec,nsec3 which zones are built).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use std::hint::black_box;
use std::time::Instant;

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use synth::{address, Edit, Form, Synth};
use tern_zone::Changeset;

#[path = "support/synth.rs"]
mod synth;

/// Records in the large change, about.
const LARGE: usize = 10_000;

/// The four changes of the bench, by name.
fn changes(synth: &Synth, names: usize) -> Vec<(&'static str, Changeset)> {
    let one = |edit: Edit| synth.change(&edit);
    let add = Edit { add: vec![("new".into(), [192, 0, 2, 1])], ..Edit::default() };
    let remove = Edit { remove: vec!["h500".into()], ..Edit::default() };
    let replace =
        Edit { replace: vec![("h500".into(), address(500), [192, 0, 2, 2])], ..Edit::default() };
    // Per name added or removed: its A record, and when signed its RRSIG, denial record,
    // that record's RRSIG and the predecessor's two denial records and two RRSIGs.
    let per_name = if synth.form == Form::Unsigned { 1 } else { 8 };
    let count = LARGE / per_name / 2;
    let step = (names / count).max(1);
    let large = Edit {
        // New names right after existing ones (`h3a` follows `h3`), removed ones between.
        add: (0..count).map(|i| (format!("h{}a", i * step + 3), [192, 0, 2, i as u8])).collect(),
        remove: (0..count).map(|i| format!("h{}", (i * step + 7) % names)).collect(),
        ..Edit::default()
    };
    vec![
        ("add one name", one(add)),
        ("remove one name", one(remove)),
        ("replace one record", one(replace)),
        ("10k records", one(large)),
    ]
}

fn bench_form(c: &mut Criterion, form: Form, names: usize) {
    let started = Instant::now();
    let synth = Synth::new(form, names);
    let zone = synth.zone();
    eprintln!(
        "{}: built {} records in {:.2} s",
        form.label(),
        zone.record_count(),
        started.elapsed().as_secs_f64()
    );
    let mut group = c.benchmark_group(format!("changeset-1M-{}", form.label()));
    for (name, change) in changes(&synth, names) {
        zone.apply(&change).unwrap();
        eprintln!("{}: {name}: {} records", form.label(), change.len());
        group.bench_function(name, |b| {
            b.iter_batched(
                || (),
                |()| black_box(zone.apply(&change).unwrap()),
                BatchSize::SmallInput,
            )
        });
    }
    group.finish();
}

fn bench(c: &mut Criterion) {
    let names: usize =
        std::env::var("TERN_BENCH_RECORDS").ok().and_then(|v| v.parse().ok()).unwrap_or(1_000_000);
    let forms = std::env::var("TERN_BENCH_FORMS").unwrap_or_else(|_| "unsigned,nsec,nsec3".into());
    for form in [Form::Unsigned, Form::Nsec, Form::Nsec3] {
        if forms.split(',').any(|f| f == form.label()) {
            bench_form(c, form, names);
        }
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
