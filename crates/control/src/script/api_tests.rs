use std::path::Path;
use std::str::FromStr;

use tern_wire::Name;
use tern_zone::Options;

use crate::script::tests::{error_of, run_text, HEAD};

#[test]
fn every_form_of_a_record_makes_what_a_zone_file_makes() {
    let script = format!(
        "{HEAD}zone.ttl = 60\n\
         for i = 1, 300 do zone.a('host' .. i, 10 << 24 | i) end\n\
         zone.a('text', '192.0.2.7', 120)\n\
         zone.a('float', 3221225985.0)\n\
         zone.a('x.example.com.', 0xC0000209)\n\
         zone.add('@', 'MX', '10 mail')\n\
         zone.add('mail', 'AAAA', '2001:db8::25', 300)\n\
         zone.add('txt', 'TXT', '\"a (quoted) text\" ; a comment')\n\
         zone.add('w', 'type65280', '\\\\# 2 abcd')\n"
    );
    let loaded = run_text(&script, |_| {}).unwrap_or_else(|e| panic!("{e}"));
    let mut file = String::from(
        "$ORIGIN example.com.\n@ 3600 SOA ns hostmaster 1700000000 3600 600 86400 300\n\
         @ 3600 NS ns\nns 3600 A 192.0.2.53\n",
    );
    for i in 1..=300u32 {
        file.push_str(&format!("host{i} 60 A 10.0.{}.{}\n", i >> 8, i & 255));
    }
    file.push_str(
        "text 120 A 192.0.2.7\nfloat 60 A 192.0.2.1\nx 60 A 192.0.2.9\n@ 60 MX 10 mail\n\
         mail 300 AAAA 2001:db8::25\ntxt 60 TXT \"a (quoted) text\"\nw 60 TYPE65280 \\# 2 abcd\n",
    );
    let origin = Name::from_str("example.com.").unwrap_or_else(|e| panic!("{e}"));
    let options = Options::default();
    let from_file = tern_zone::load_bytes(file.as_bytes(), Path::new("z"), &origin, &options)
        .unwrap_or_else(|e| panic!("{e}"));
    let (ours, theirs) = (&loaded.contents, &from_file.contents);
    assert_eq!(ours.record_count(), 3 + 300 + 7);
    assert_eq!(ours.record_count(), theirs.record_count());
    let change = ours.diff(theirs).unwrap_or_else(|| panic!("no SOA"));
    assert!(change.added.is_empty() && change.removed.is_empty(), "{change:?}");
    assert_eq!(loaded.parse.records, 3 + 300 + 7, "every call counted");
}

#[test]
fn bad_addresses_are_refused_at_their_line() {
    for (call, why) in [
        ("zone.a('x', -1)", "integer from 0 to 4294967295, not -1"),
        ("zone.a('x', 4294967296)", "not 4294967296"),
        ("zone.a('x', 1.5)", "not 1.5"),
        ("zone.a('x', {})", "not table"),
        ("zone.a('x', true)", "not boolean"),
        ("zone.a('x')", "not nil"),
        ("zone.a('x', '192.0.2.256')", "does not read: zone.a: A \"192.0.2.256\""),
        ("zone.a('x', '192.0.2.1 192.0.2.2')", "unexpected '192.0.2.2' at the end"),
        ("zone.a('x', '192.0.2.1\\n')", "one line"),
    ] {
        let why_text = error_of(&format!("{HEAD}{call}\n"), |_| {});
        assert!(
            why_text.contains("zone.lua:5: ")
                && why_text.contains("zone.a: ")
                && why_text.contains(why),
            "{call}: {why_text}"
        );
    }
}

#[test]
fn bad_names_types_and_ttls_are_refused_at_their_line() {
    for (call, why) in [
        ("zone.a('', 1)", "zone.a: \"\" is not a record name"),
        ("zone.a('a..b', 1)", "zone.a: \"a..b\" is not a record name: "),
        ("zone.a(string.rep('a', 64), 1)", "is not a record name: label longer than 63"),
        ("zone.a('$ORIGIN', 1)", "not a record name"),
        ("zone.a('x', 1, 2147483648)", "zone.a: TTL 2147483648 is above 2147483647"),
        ("zone.add('x', 'ANY', '1')", "zone.add: \"ANY\" is not a record type"),
        ("zone.add('x', '', '1')", "zone.add: \"\" is not a record type"),
        ("zone.add('x', 'A', '192.0.2.1', 2147483648)", "zone.add: TTL 2147483648"),
    ] {
        let why_text = error_of(&format!("{HEAD}{call}\n"), |_| {});
        assert!(
            why_text.contains(&format!("zone.lua:5: {why}")) || why_text.contains(why),
            "{call}: {why_text}"
        );
        assert!(why_text.contains("zone.lua:5:"), "{call}: {why_text}");
    }
    for call in ["zone.a({}, 1)", "zone.a('x', 1, -5)", "zone.a('x', 1, 'soon')"] {
        let why_text = error_of(&format!("{HEAD}{call}\n"), |_| {});
        assert!(why_text.contains("zone.lua:5: bad argument"), "{call}: {why_text}");
    }
}

#[test]
fn findings_of_the_zone_name_the_script_line() {
    let why = error_of(&format!("{HEAD}zone.add('x', 'CNAME', 'ns')\nzone.a('x', 1)\n"), |_| {});
    assert!(why.contains("the records do not make a zone"), "{why}");
    assert!(why.contains("zone.lua:5: error: x.example.com. CNAME exists beside A data"), "{why}");
}

#[test]
fn zone_ttl_is_checked_when_set_and_other_fields_stay_the_scripts() {
    let text = format!(
        "{HEAD}assert(zone.ttl == 3600)\nzone.ttl = 120.0\nassert(zone.ttl == 120)\n\
         zone.mine = 'kept'\nassert(zone.mine == 'kept' and zone.other == nil)\nzone.a('x', 1)\n"
    );
    let loaded = run_text(&text, |_| {}).unwrap_or_else(|e| panic!("{e}"));
    let x = Name::from_str("x.example.com.").unwrap_or_else(|e| panic!("{e}"));
    let node = loaded.contents.find(&x).and_then(|id| loaded.contents.node(id));
    let ttl = node.and_then(|n| n.rrset(tern_wire::Rtype::A)).map(|r| r.ttl);
    assert_eq!(ttl, Some(120));
    for (value, shown) in
        [("-1", "-1"), ("2147483648", "2147483648"), ("'soon'", "string"), ("0.5", "0.5")]
    {
        let why = error_of(&format!("{HEAD}zone.ttl = {value}\n"), |_| {});
        assert!(
            why.contains(&format!(
                "zone.lua:5: zone.ttl is an integer from 0 to 2147483647, not {shown}"
            )),
            "{value}: {why}"
        );
    }
}
