//! The printer: records back to presentation format, one per line, names absolute
//! (`owner TTL class type RDATA`), for round-trip tests, `ternd check-zone` and dumps.
//! What it prints, the parser reads back to the same records.

use std::fmt::Write;

use tern_wire::rdata;

use super::record::Record;

/// Appends `record` as one line (with its newline) to `out`.
pub fn write_record(record: &Record<'_>, out: &mut String) {
    // Writing into a String cannot fail.
    let _ = write!(out, "{}\t{}\t{}\t{}\t", record.owner, record.ttl, record.class, record.rtype);
    rdata::write_text(record.rtype, record.rdata, out);
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use tern_wire::{Class, Name, Rtype};

    use super::*;
    use crate::parser::Location;

    #[test]
    fn one_line_absolute_names() {
        let owner: Name = "www.example.".parse().unwrap();
        let rdata = rdata::parse_str(Rtype::MX, "10 mail.example.", None).unwrap();
        let record = Record {
            owner: &owner,
            class: Class::IN,
            rtype: Rtype::MX,
            ttl: 300,
            rdata: &rdata,
            location: Location { file: Path::new("z"), file_number: 0, line: 1 },
        };
        let mut out = String::new();
        write_record(&record, &mut out);
        assert_eq!(out, "www.example.\t300\tIN\tMX\t10 mail.example.\n");
        assert_eq!(record.to_string(), "www.example.\t300\tIN\tMX\t10 mail.example.");
        let unknown = Record { rtype: Rtype(65280), rdata: &[1, 2], ..record };
        out.clear();
        write_record(&unknown, &mut out);
        assert_eq!(out, "www.example.\t300\tIN\tTYPE65280\t\\# 2 0102\n");
    }
}
