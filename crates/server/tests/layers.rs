//! The layers of the server and control-plane crates (issue 50): each module may use
//! only modules of a lower layer, so that no two import each other, directly or round a
//! cycle, and nothing low depends on what is built on it. A new module must be given a
//! layer here. Read from the sources: `crate::x` paths and `use crate::{x, …}` groups
//! outside comments and outside the test modules at the end of each file.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// The server crate, lowest layer first.
const SERVER: &[&[&str]] = &[
    &["error", "random", "handler", "manpage", "version", "check_zone", "priority"],
    &["stats", "tls", "signals"],
    &["config", "privileges", "counters"],
    &["logging", "demo", "check_config", "rrl", "io"],
    &["dns", "client", "cli", "ctl"],
    &["http"],
    &["lifecycle"],
];

/// The control plane, lowest layer first.
const CONTROL: &[&[&str]] = &[
    &["peer"],
    &["database"],
    &[
        "clock",
        "plan",
        "progress",
        "priority",
        "refusals",
        "storage",
        "inbox",
        "counters",
        "timer_queue",
        "tidy",
        "blocking",
        "listing",
    ],
    &["error", "updates", "query_stats"],
    &["change", "keystore"],
    &["event", "script"],
    &["state", "shared", "notify", "signer", "database_load"],
    &["writer"],
    &["database_kept", "dormant"],
    &["journaled", "catalog", "registry"],
    &["commit"],
    &["primary", "secondary"],
    &["refresh", "dynamic", "commands", "backup", "signed_zone"],
    &["run"],
    &["plane"],
    &["database_follow"],
];

/// Files that are not modules of their own (the crate root, the binary, test helpers).
const ROOTS: &[&str] = &["lib", "main", "testing"];

fn src(krate: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(krate).join("src")
}

/// Each top-level module of `dir` and its source files (a directory's, all of them).
fn modules(dir: &Path) -> HashMap<String, Vec<PathBuf>> {
    let mut out = HashMap::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let files = match path.is_dir() {
            true => rust_files(&path),
            false if path.extension().is_some_and(|e| e == "rs") => vec![path.clone()],
            false => continue,
        };
        let files: Vec<PathBuf> = files.into_iter().filter(|f| !test_file(f)).collect();
        if !ROOTS.contains(&name.as_str()) && !name.ends_with("_tests") && name != "bin" {
            out.entry(name).or_insert_with(Vec::new).extend(files);
        }
    }
    out
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files
}

fn test_file(path: &Path) -> bool {
    let name = path.file_stem().unwrap().to_string_lossy();
    name == "tests"
        || name.ends_with("_tests")
        || path.components().any(|c| c.as_os_str() == "tests")
}

/// The modules of this crate that `text` names (`crate::x`), its tests and comments left
/// out.
fn uses(text: &str) -> BTreeSet<String> {
    let code = text.split("\n#[cfg(test)]\nmod tests").next().unwrap();
    let mut out = BTreeSet::new();
    for line in code.lines().map(str::trim).filter(|l| !l.starts_with("//")) {
        let mut rest = line;
        while let Some(at) = rest.find("crate::") {
            rest = &rest[at + "crate::".len()..];
            if let Some(group) = rest.strip_prefix('{') {
                let inside = group.split('}').next().unwrap();
                out.extend(inside.split(',').map(|p| head(p.trim())).filter(|h| !h.is_empty()));
            } else {
                out.insert(head(rest));
            }
        }
    }
    out.retain(|m| m.chars().next().is_some_and(|c| c.is_ascii_lowercase()));
    out
}

/// The first path segment of `path`.
fn head(path: &str) -> String {
    path.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect()
}

/// Every use of a module of the same or a higher layer, as `a -> b`.
fn violations(krate: &str, layers: &[&[&str]]) -> Vec<String> {
    let layer: HashMap<&str, usize> =
        layers.iter().enumerate().flat_map(|(i, l)| l.iter().map(move |m| (*m, i))).collect();
    let modules = modules(&src(krate));
    let mut bad = Vec::new();
    for (module, files) in &modules {
        let Some(&mine) = layer.get(module.as_str()) else {
            bad.push(format!(
                "{krate}: module `{module}` has no layer (give it one in tests/layers.rs)"
            ));
            continue;
        };
        for file in files {
            for used in uses(&std::fs::read_to_string(file).unwrap()) {
                match layer.get(used.as_str()) {
                    Some(&theirs) if used != *module && theirs >= mine => bad.push(format!(
                        "{krate}: {} uses `{used}` (layer {theirs}) from layer {mine}",
                        file.display()
                    )),
                    _ => {}
                }
            }
        }
    }
    for name in layer.keys() {
        if !modules.contains_key(*name) && *name != "priority" {
            bad.push(format!("{krate}: `{name}` has a layer but no module"));
        }
    }
    bad.sort();
    bad
}

#[test]
fn the_server_uses_only_lower_layers() {
    let bad = violations("server", SERVER);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn the_control_plane_uses_only_lower_layers() {
    let bad = violations("control", CONTROL);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// The checker itself: a use from a lower layer to a higher one is caught, and what is
/// in comments or test modules is not counted.
#[test]
fn the_check_finds_a_use_going_up() {
    let text = "use crate::{a, b::C};\n// crate::z\nfn f() { crate::c::g(); }\n#[cfg(test)]\nmod tests {\n use crate::y;\n}\n";
    let found: Vec<String> = uses(text).into_iter().collect();
    assert_eq!(found, ["a", "b", "c"]);
}
