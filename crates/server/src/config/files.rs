//! The zone files a configuration names, checked against one another and against what
//! the server keeps in its storage directory, and the files of zones added at run time
//! confined to `added-zone-dirs`.
//!
//! * A secondary writes its file (the kept copy): no other zone may use it. Primaries
//!   may share a file they only read (a parked-domain zone file used by many zones).
//! * No zone file may be one of the server's own files in `storage`: a journal, a
//!   set-aside journal, timers, the lock or the file of added zones. Journals and kept
//!   copies are named from zone names by `tern_journal::files`, which never gives two
//!   zones one file; this check covers the files an operator names.
//! * A zone added at run time (`ternctl zone-add`, `POST /api/v1/zones`) names an
//!   absolute path inside one of `added-zone-dirs` (default: `storage`), symbolic
//!   links resolved: a token holder cannot make the server read (and quote in an
//!   error) or overwrite a file elsewhere.

use std::borrow::Cow;
use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use tern_wire::Name;

use super::{Role, ZonePlan, ZoneSource, ADDED_ZONES};

/// Who uses which zone file: its zone, and whether it writes the file (a secondary).
pub type FileUsers = HashMap<PathBuf, (Name, bool)>;

/// The files `plans` use, without checking them.
pub fn users<'p>(plans: impl IntoIterator<Item = &'p Arc<ZonePlan>>) -> FileUsers {
    let mut users = FileUsers::new();
    for plan in plans {
        if let ZoneSource::File(path) = &plan.source {
            users.insert(normal(path), (plan.name.clone(), writes(plan)));
        }
    }
    users
}

/// Adds `plan`'s file to `users`, or says why it cannot use it.
pub fn claim(plan: &ZonePlan, users: &mut FileUsers, storage: &Path) -> Result<(), String> {
    let Some(path) = zone_file(plan, storage)? else { return Ok(()) };
    let writes = writes(plan);
    let other = users.get(&path).map(|(name, writes)| (name, *writes));
    if let Some(why) = shared_copy(&path, other, &plan.name, writes) {
        return Err(why);
    }
    users.insert(path, (plan.name.clone(), writes));
    Ok(())
}

/// Checks the files of `plans` as [`claim`] does, one plan after the other from no
/// users, without copying a path: the position of each plan that cannot use its file,
/// and why.
pub fn check(plans: &[Arc<ZonePlan>], storage: &Path) -> Vec<(usize, String)> {
    let storage = normal(storage);
    let mut users: HashMap<Normal<'_>, (&Name, bool)> = HashMap::with_capacity(plans.len());
    let mut refused = Vec::new();
    for (at, plan) in plans.iter().enumerate() {
        let path = match own_file(plan, &storage) {
            Ok(Some(path)) => path,
            Ok(None) => continue,
            Err(why) => {
                refused.push((at, why));
                continue;
            }
        };
        let writes = writes(plan);
        match users.entry(Normal(path)) {
            Entry::Vacant(vacant) => {
                vacant.insert((&plan.name, writes));
            }
            Entry::Occupied(mut user) => {
                match shared_copy(&user.key().0, Some(*user.get()), &plan.name, writes) {
                    Some(why) => refused.push((at, why)),
                    None => *user.get_mut() = (&plan.name, writes),
                }
            }
        }
    }
    refused
}

/// A normal path ([`normal`]) in a map: compared and hashed as bytes, which for normal
/// paths is as paths (part by part), and cheaper.
#[derive(Debug)]
struct Normal<'p>(Cow<'p, Path>);

impl PartialEq for Normal<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.0.as_os_str() == other.0.as_os_str()
    }
}

impl Eq for Normal<'_> {}

impl std::hash::Hash for Normal<'_> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.as_os_str().hash(state);
    }
}

/// Why zone `name` cannot use `path` that `other` uses: when either writes it (a
/// secondary's kept copy is its own).
fn shared_copy(
    path: &Path,
    other: Option<(&Name, bool)>,
    name: &Name,
    writes: bool,
) -> Option<String> {
    let (other, other_writes) = other?;
    (other != name && (writes || other_writes)).then(|| {
        format!(
            "file {}: zone {other} uses it too, and a secondary's kept copy must be its own",
            path.display()
        )
    })
}

/// `plan`'s zone file, normalised ([`normal`]), unless it is one of the server's own
/// files in `storage` (an error says so); `None` for a zone without a file.
pub fn zone_file(plan: &ZonePlan, storage: &Path) -> Result<Option<PathBuf>, String> {
    Ok(own_file(plan, &normal(storage))?.map(Cow::into_owned))
}

/// [`zone_file`], `storage` normalised already, the path borrowed when it is normal.
fn own_file<'p>(plan: &'p ZonePlan, storage: &Path) -> Result<Option<Cow<'p, Path>>, String> {
    let Some(path) = normal_file(plan) else { return Ok(None) };
    if directly_in(&path, storage) && reserved(&path) {
        return Err(format!(
            "file {}: a file ternd keeps in its storage directory (journals, timers, its lock, {ADDED_ZONES}), not a zone file",
            path.display()
        ));
    }
    Ok(Some(path))
}

/// `plan`'s zone file, normalised ([`normal`]) but not checked as [`zone_file`] checks
/// it (for zones checked when they were taken), borrowed when it is normal already;
/// `None` for a zone without a file.
pub fn normal_file(plan: &ZonePlan) -> Option<Cow<'_, Path>> {
    let ZoneSource::File(path) = &plan.source else { return None };
    Some(normal_cow(path))
}

/// True when `plan` writes its zone file (a secondary's kept copy).
pub fn writes(plan: &ZonePlan) -> bool {
    matches!(plan.role, Role::Secondary(_))
}

/// True when normal `path` names a file in normal directory `dir`: `dir` is its parent
/// (compared as bytes, which for normal paths is as paths).
fn directly_in(path: &Path, dir: &Path) -> bool {
    let (path, dir) = (path.as_os_str().as_encoded_bytes(), dir.as_os_str().as_encoded_bytes());
    let Some(rest) = path.strip_prefix(dir) else { return false };
    let name = match (dir, rest) {
        (b"" | b"/", _) => rest,
        (_, [b'/', name @ ..]) => name,
        _ => return false,
    };
    !name.is_empty() && !name.contains(&b'/')
}

/// True for the names of the server's own files in storage.
fn reserved(path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else { return true };
    name.ends_with(".journal")
        || name.contains(".journal.")
        || name.ends_with(".timers")
        || name.starts_with('.')
        || name == tern_journal::LOCK_FILE
        || name == ADDED_ZONES
}

/// `path` without `.` and with `..` taken back (lexically: the file may not exist yet).
pub fn normal(path: &Path) -> PathBuf {
    normal_cow(path).into_owned()
}

/// [`normal`], borrowed when `path` is normal already (the usual case: then it has
/// nothing to take out, and is not rebuilt part by part).
fn normal_cow(path: &Path) -> Cow<'_, Path> {
    if is_normal(path) {
        return Cow::Borrowed(path);
    }
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    Cow::Owned(out)
}

/// True when [`normal`] gives `path` back unchanged: after the root, no empty part
/// (`//`, a trailing `/`), `.` or `..`.
fn is_normal(path: &Path) -> bool {
    let Some(text) = path.to_str() else {
        let bytes = path.as_os_str().as_encoded_bytes();
        let body = bytes.strip_prefix(b"/").unwrap_or(bytes);
        return body.is_empty()
            || body.split(|&b| b == b'/').all(|part| !matches!(part, b"" | b"." | b".."));
    };
    // The same on text, searched (quickly) rather than split: no empty part, and no
    // part `.` or `..`, first, inside or last.
    let body = text.strip_prefix('/').unwrap_or(text);
    let inside = ["//", "/./", "/../"].iter().any(|part| body.contains(part));
    let first = [".", ".."].contains(&body) || body.starts_with("./") || body.starts_with("../");
    let last = body.ends_with("/.") || body.ends_with("/..");
    body.is_empty() || !(inside || first || last || body.starts_with('/') || body.ends_with('/'))
}

/// Checks the file of a zone added at run time: an absolute path in one of `dirs`
/// once symbolic links are resolved (its directory must exist; the file need not, for
/// a secondary). The file is not read. Returns the path as checked.
pub fn confine(file: &Path, dirs: &[PathBuf]) -> Result<PathBuf, String> {
    Confinement::new(dirs).check(file)
}

/// [`confine`] for the many files of one zone-add: the directories zones may be added
/// from, and the directories of the files checked, are resolved once each.
#[derive(Debug)]
pub struct Confinement {
    /// `added-zone-dirs` as configured (for messages).
    dirs: Vec<PathBuf>,
    /// The same, links resolved (those that exist).
    real: Vec<PathBuf>,
    /// Each directory of a file checked, links resolved (`None`: it cannot be).
    parents: HashMap<PathBuf, Option<PathBuf>>,
}

impl Confinement {
    /// Files to be confined to `dirs`.
    pub fn new(dirs: &[PathBuf]) -> Confinement {
        let real = dirs.iter().filter_map(|d| std::fs::canonicalize(d).ok()).collect();
        Confinement { dirs: dirs.to_vec(), real, parents: HashMap::new() }
    }

    /// Checks `file` as [`confine`] does.
    pub fn check(&mut self, file: &Path) -> Result<PathBuf, String> {
        if !file.is_absolute() {
            return Err(format!("file {}: must be an absolute path", file.display()));
        }
        let (Some(parent), Some(name)) = (file.parent(), file.file_name()) else {
            return Err(self.outside(file));
        };
        let parent = self
            .parents
            .entry(parent.to_owned())
            .or_insert_with(|| std::fs::canonicalize(parent).ok());
        let Some(parent) = parent else { return Err(self.outside(file)) };
        let mut real = parent.join(name);
        // The directory is resolved: only the file itself may still be a link.
        match std::fs::symlink_metadata(&real) {
            Ok(meta) if meta.file_type().is_symlink() => {
                real = std::fs::canonicalize(&real).map_err(|_| self.outside(file))?;
                if !real.is_file() {
                    return Err(format!("file {}: not a regular file", file.display()));
                }
            }
            Ok(meta) if !meta.is_file() => {
                return Err(format!("file {}: not a regular file", file.display()));
            }
            Ok(_) | Err(_) => {}
        }
        match self.real.iter().any(|d| real.starts_with(d) && real != *d) {
            true => Ok(file.to_owned()),
            false => Err(self.outside(file)),
        }
    }

    fn outside(&self, file: &Path) -> String {
        let listed: Vec<String> = self.dirs.iter().map(|d| d.display().to_string()).collect();
        format!(
            "file {}: not in a directory zones may be added from (`[server] added-zone-dirs`: {})",
            file.display(),
            listed.join(", ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn plan(name: &str, file: &Path, secondary: bool) -> Arc<ZonePlan> {
        let mut text = String::from("[[remote]]\nid = \"p\"\naddress = \"127.0.0.1\"\n");
        text += &format!("[[zone]]\nname = \"{name}\"\nfile = \"/elsewhere/z\"\n");
        if secondary {
            text += "primary = \"p\"\n";
        }
        let config = super::super::Config::from_text(&text, Path::new("/etc/t.toml")).unwrap();
        let mut plan = (*config.resolved.zones[0]).clone();
        plan.source = ZoneSource::File(file.to_owned());
        Arc::new(plan)
    }

    #[test]
    fn a_secondary_copy_is_its_own_and_storage_files_are_not_zone_files() {
        let storage = Path::new("/var/lib/tern");
        let shared = Path::new("/etc/tern/parked.zone");
        let mut users = FileUsers::new();
        claim(&plan("a.example", shared, false), &mut users, storage).unwrap();
        claim(&plan("b.example", shared, false), &mut users, storage).unwrap();
        let why = claim(&plan("c.example", shared, true), &mut users, storage).unwrap_err();
        assert!(why.contains("must be its own"), "{why}");
        let copy = Path::new("/var/lib/tern/./d.example.zone");
        claim(&plan("d.example", copy, true), &mut users, storage).unwrap();
        let why = claim(
            &plan("e.example", Path::new("/var/lib/tern/d.example.zone"), false),
            &mut users,
            storage,
        )
        .unwrap_err();
        assert!(why.contains("zone d.example."), "{why}");
        for own in [
            "a.example.journal",
            "ternd.lock",
            "zones-added.toml",
            "x.zone.timers",
            "a.journal.damaged.1",
        ] {
            let why = claim(&plan("f.example", &storage.join(own), true), &mut users, storage)
                .unwrap_err();
            assert!(why.contains("not a zone file"), "{own}: {why}");
        }
        assert_eq!(super::users(&[plan("g.example", copy, true)]).len(), 1);
    }

    /// Checking the plans all at once refuses what claiming them one by one does.
    #[test]
    fn checking_all_refuses_what_claiming_each_does() {
        let storage = Path::new("/var/lib/tern/.");
        let plans = [
            plan("a.example", Path::new("/etc/tern/parked.zone"), false),
            plan("b.example", Path::new("/etc/tern/./parked.zone"), false),
            plan("c.example", Path::new("/etc/tern/parked.zone"), true),
            plan("d.example", Path::new("/var/lib/tern/d.zone"), true),
            plan("e.example", Path::new("/var/lib/tern//d.zone"), false),
            plan("f.example", Path::new("/var/lib/tern/x.journal"), false),
            plan("d.example", Path::new("/var/lib/tern/d.zone"), true),
        ];
        let mut users = FileUsers::new();
        let claimed: Vec<(usize, String)> = plans
            .iter()
            .enumerate()
            .filter_map(|(at, plan)| claim(plan, &mut users, storage).err().map(|why| (at, why)))
            .collect();
        assert_eq!(claimed.iter().map(|(at, _)| *at).collect::<Vec<_>>(), [2, 4, 5]);
        assert_eq!(check(&plans, storage), claimed);
    }

    /// A path found normal already is given back as the part-by-part rebuild gives it.
    #[test]
    fn a_normal_path_is_borrowed_and_the_same() {
        for path in [
            "",
            "/",
            "//",
            "/a",
            "/a/b.zone",
            "./",
            "../a",
            "a/.",
            "a/..",
            "...",
            "a/.../b",
            "//a",
            "/a/./b",
            "a/b/../c",
            "/a/.b/c..",
            "a/b",
            "./a",
            "a/./b",
            "a/../b",
            "/a//b",
            "/a/b/",
            "/a/.",
            "/a/..",
            "..",
            ".",
            "/.hidden/x",
            "/a/b..c/d.",
            "a\\b",
        ] {
            let rebuilt: PathBuf = {
                let mut out = PathBuf::new();
                for part in Path::new(path).components() {
                    match part {
                        Component::CurDir => {}
                        Component::ParentDir => {
                            out.pop();
                        }
                        other => out.push(other),
                    }
                }
                out
            };
            assert_eq!(normal(Path::new(path)), rebuilt, "{path:?}");
            let same = Path::new(path).as_os_str() == rebuilt.as_os_str();
            assert_eq!(is_normal(Path::new(path)), same, "{path:?}");
        }
        assert!(is_normal(Path::new("/var/lib/tern/a.example.zone")));
        use std::os::unix::ffi::OsStrExt;
        let bytes = |b: &'static [u8]| Path::new(std::ffi::OsStr::from_bytes(b));
        assert!(is_normal(bytes(b"/a/\xff/b")));
        assert!(!is_normal(bytes(b"/a/\xff/./b")) && !is_normal(bytes(b"/a/\xff//b")));
        for (path, dir) in [
            ("/var/lib/tern/x", "/var/lib/tern"),
            ("/var/lib/ternx", "/var/lib/tern"),
            ("/var/lib/tern/a/x", "/var/lib/tern"),
            ("/var/lib/tern", "/var/lib/tern"),
            ("/x", "/"),
            ("/", "/"),
            ("x", ""),
            ("/x", ""),
            ("a/x", "a"),
            ("a", "a"),
        ] {
            let (path, dir) = (Path::new(path), Path::new(dir));
            assert_eq!(directly_in(path, dir), path.parent() == Some(dir), "{path:?} in {dir:?}");
        }
    }

    #[test]
    fn files_added_at_run_time_stay_in_their_directories() {
        let dir = tempfile::tempdir().unwrap();
        let allowed = dir.path().join("zones");
        std::fs::create_dir(&allowed).unwrap();
        std::fs::write(allowed.join("a.zone"), "x").unwrap();
        std::fs::write(dir.path().join("secret"), "root:x:0:0").unwrap();
        std::os::unix::fs::symlink(dir.path().join("secret"), allowed.join("link.zone")).unwrap();
        let dirs = [allowed.clone()];
        assert!(confine(&allowed.join("a.zone"), &dirs).is_ok());
        assert!(confine(&allowed.join("new.zone"), &dirs).is_ok(), "a secondary's copy to be");
        for bad in [
            dir.path().join("secret"),
            allowed.join("../secret"),
            allowed.join("link.zone"),
            PathBuf::from("/etc/passwd"),
            allowed.join("missing/a.zone"),
            allowed.clone(),
        ] {
            let why = confine(&bad, &dirs).unwrap_err();
            assert!(!why.contains("root:x"), "never the file's contents: {why}");
            assert!(why.contains("added-zone-dirs") || why.contains("regular"), "{why}");
        }
        assert!(confine(Path::new("zones/a.zone"), &dirs).unwrap_err().contains("absolute"));
        // One confinement for many files says what `confine` says of each.
        let mut many = Confinement::new(&dirs);
        assert!(many.check(&allowed.join("a.zone")).is_ok());
        assert!(many.check(&allowed.join("new.zone")).is_ok());
        assert!(many.check(&allowed.join("link.zone")).is_err());
        assert!(many.check(&allowed.join("../secret")).is_err());
        assert!(many.check(&allowed.join("missing/a.zone")).is_err());
        assert!(many.check(&allowed.clone()).is_err());
        std::fs::create_dir(allowed.join("sub")).unwrap();
        assert!(many.check(&allowed.join("sub")).unwrap_err().contains("regular"));
    }
}
