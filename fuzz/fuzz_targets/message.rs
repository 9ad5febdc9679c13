//! Messages: whatever the reader accepts is written again with the writer and read back
//! equal (names compared case-insensitively, since compression may point to another
//! spelling of the same suffix).
#![no_main]

use libfuzzer_sys::fuzz_target;
use tern_wire::message::{
    CompressionTable, Flags, MessageReader, MessageWriter, Question, Section, MAX_RDATA_LEN,
};
use tern_wire::{Class, Name, Rtype};

/// A record read from a message, owned.
#[derive(Debug, PartialEq, Eq)]
struct Rr {
    section: Section,
    owner: Name,
    rtype: Rtype,
    class: Class,
    ttl: u32,
    rdata: Vec<u8>,
}

fn read(wire: &[u8]) -> Option<(u16, Flags, Vec<Question>, Vec<Rr>)> {
    let mut reader = MessageReader::new(wire).ok()?;
    let mut questions = Vec::new();
    while let Some(q) = reader.question().ok()? {
        questions.push(q);
    }
    let mut records = Vec::new();
    let mut scratch = vec![0u8; MAX_RDATA_LEN];
    while let Some(r) = reader.record(&mut scratch).ok()? {
        // Expanded names may come back in another spelling (compression points to the
        // first one written); ASCII-folding the whole RDATA is enough to compare them.
        let rdata = if r.rtype.shape().decompress {
            r.rdata.to_ascii_lowercase()
        } else {
            r.rdata.to_vec()
        };
        records.push(Rr {
            section: r.section,
            owner: r.owner.to_name(),
            rtype: r.rtype,
            class: r.class,
            ttl: r.ttl,
            rdata,
        });
    }
    let h = reader.header();
    Some((h.id, h.flags, questions, records))
}

fn write(
    id: u16,
    flags: Flags,
    questions: &[Question],
    records: &[Rr],
    buf: &mut [u8],
) -> Option<usize> {
    let mut table = CompressionTable::new();
    let mut w = MessageWriter::new(buf, 65535, &mut table).ok()?;
    w.set_id(id);
    w.set_flags(flags);
    for q in questions {
        w.push_question(&q.name, q.qtype, q.qclass).ok()?;
    }
    for r in records {
        w.push_record(r.section, &r.owner, r.rtype, r.class, r.ttl, &r.rdata).ok()?;
    }
    Some(w.len())
}

fuzz_target!(|data: &[u8]| {
    let Some((id, flags, questions, records)) = read(data) else {
        return;
    };
    let mut buf = vec![0u8; 65535];
    // A rewrite can be longer than the input (SRV-like RDATA is read compressed but written
    // in full), so running out of room is not a failure.
    let Some(len) = write(id, flags, &questions, &records, &mut buf) else {
        return;
    };
    let (id2, flags2, questions2, records2) =
        read(&buf[..len]).expect("rewritten message reads back");
    assert_eq!((id, flags), (id2, flags2));
    assert_eq!(questions.len(), questions2.len());
    for (a, b) in questions.iter().zip(&questions2) {
        assert_eq!((&a.name, a.qtype, a.qclass), (&b.name, b.qtype, b.qclass));
    }
    assert_eq!(records, records2);
});
