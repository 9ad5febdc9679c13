use std::str::FromStr;

use tern_wire::{Name, Rtype};

use super::*;

/// Runs `text` as the script of `example.com.` at time 1700000000.
pub(super) fn run_text(text: &str, tweak: impl FnOnce(&mut Script)) -> Result<Loaded, Error> {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let path = dir.path().join("zone.lua");
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("{e}"));
    let mut script = Script::new(path);
    tweak(&mut script);
    let origin = Name::from_str("example.com.").unwrap_or_else(|e| panic!("{e}"));
    run(&script, &origin, 1_700_000_000)
}

/// The error's text, for a run that must fail.
pub(super) fn error_of(text: &str, tweak: impl FnOnce(&mut Script)) -> String {
    match run_text(text, tweak) {
        Ok(_) => panic!("the script ran"),
        Err(e) => e.to_string(),
    }
}

pub(super) const HEAD: &str = r#"
zone.add("@", "SOA", "ns hostmaster " .. zone.now .. " 3600 600 86400 300")
zone.add("@", "NS", "ns")
zone.add("ns", "A", "192.0.2.53")
"#;

#[test]
fn a_script_builds_a_zone() {
    let text = format!(
        "{HEAD}zone.ttl = 60\nfor i = 1, 100 do zone.add(\"host\" .. i, \"A\", \"192.0.2.\" .. i) end\n\
         zone.add(\"mail\", \"MX\", \"10 mx.\" .. zone.origin, 300)\n\
         zone.add(\"txt\", \"TXT\", '\"a (quoted) text\"')\n"
    );
    let loaded = run_text(&text, |_| {}).unwrap_or_else(|e| panic!("{e}"));
    let zone = &loaded.contents;
    assert_eq!(zone.serial(), 1_700_000_000, "zone.now is the serial");
    assert_eq!(zone.record_count(), 3 + 100 + 2);
    let ttl = |name: &str, rtype: Rtype| {
        let name = Name::from_str(name).unwrap_or_else(|e| panic!("{e}"));
        let node = zone.find(&name).and_then(|id| zone.node(id));
        node.and_then(|n| n.rrset(rtype)).map(|r| r.ttl)
    };
    assert_eq!(ttl("ns.example.com.", Rtype::A), Some(3600), "the default TTL");
    assert_eq!(ttl("host7.example.com.", Rtype::A), Some(60), "zone.ttl, once set");
    assert_eq!(ttl("mail.example.com.", Rtype::MX), Some(300), "a TTL given to zone.add");
}

#[test]
fn the_sandbox_has_no_files_processes_or_loaders() {
    for (call, line) in [
        ("io.open('/etc/passwd')", 5),
        ("os.execute('true')", 5),
        ("require('socket')", 5),
        ("load('return 1')()", 5),
        ("dofile('/etc/passwd')", 5),
        ("loadfile('/etc/passwd')", 5),
        ("print('x')", 5),
    ] {
        let why = error_of(&format!("{HEAD}{call}\n"), |_| {});
        assert!(why.contains(&format!("zone.lua:{line}:")), "{call}: {why}");
        assert!(why.contains("nil"), "{call}: {why}");
    }
}

#[test]
fn an_endless_loop_is_stopped_at_its_line() {
    let why = error_of(&format!("{HEAD}local n = 0\nwhile true do n = n + 1 end\n"), |s| {
        s.max_instructions = 1_000_000;
    });
    assert!(why.contains("zone.lua:6: the script ran more than 1000000 instructions"), "{why}");
}

#[test]
fn a_memory_bomb_is_stopped() {
    let bomb = "local t = {}\nfor i = 1, 1e9 do t[i] = string.rep('x', 64) .. i end\n";
    let why = error_of(&format!("{HEAD}{bomb}"), |s| s.max_memory = 8 << 20);
    assert!(why.contains("memory limit (max-memory)"), "{why}");
    // Records count too: a script cannot fill the server's memory through zone.add.
    let records = "for i = 1, 1e9 do zone.add('h' .. i, 'A', '192.0.2.1') end\n";
    let why = error_of(&format!("{HEAD}{records}"), |s| s.max_memory = 1 << 20);
    assert!(why.contains("zone.lua:5: zone.add: the records emitted pass"), "{why}");
}

#[test]
fn a_bad_record_names_the_line_of_its_add() {
    let why = error_of(&format!("{HEAD}\nzone.add('www', 'A', 'not an address')\n"), |_| {});
    assert!(why.contains("zone.lua:6: a record that does not read: zone.add: A"), "{why}");
    let why = error_of(&format!("{HEAD}zone.add('x', 'NOSUCHTYPE', '1')\n"), |_| {});
    assert!(why.contains("zone.lua:5:"), "{why}");
}

#[test]
fn records_cannot_smuggle_directives_or_other_lines() {
    for (add, what) in [
        ("zone.add('$INCLUDE', 'A', '192.0.2.1')", "not a record name"),
        ("zone.add('a b', 'A', '192.0.2.1')", "not a record name"),
        ("zone.add('x', 'A IN', '192.0.2.1')", "not a record type"),
        ("zone.add('x', 'A', '192.0.2.1\\ny A 192.0.2.2')", "one line"),
        ("zone.add('x', 'TXT', '( \"a\"')", "parentheses"),
    ] {
        let why = error_of(&format!("{HEAD}{add}\n"), |_| {});
        assert!(why.contains("zone.lua:5: zone.add:") && why.contains(what), "{add}: {why}");
    }
}

#[test]
fn syntax_and_runtime_errors_give_the_line() {
    let why = error_of(&format!("{HEAD}\n\nzone.add(\n"), |_| {});
    assert!(why.contains("zone.lua:"), "{why}");
    let why = error_of(&format!("{HEAD}error('no data for this zone')\n"), |_| {});
    assert!(why.contains("zone.lua:5: no data for this zone"), "{why}");
    let why = error_of(&format!("{HEAD}zone.add('www', 'A')\n"), |_| {});
    assert!(why.contains("zone.lua:5: bad argument"), "a missing argument: {why}");
    let why = error_of("return 1\n", |_| {});
    assert!(why.contains("SOA") || why.contains("soa"), "a script that adds nothing: {why}");
}

#[test]
fn a_missing_or_huge_script_is_refused() {
    let origin = Name::from_str("example.com.").unwrap_or_else(|e| panic!("{e}"));
    let missing = run(&Script::new("/nonexistent/zone.lua".into()), &origin, 0);
    assert!(missing.is_err_and(|e| e.to_string().contains("cannot be read")));
}
