//! Dropping root privileges after the sockets are bound: switch to the configured user
//! and group, with no supplementary groups, and check that root cannot be regained.

use std::ffi::CString;

use crate::error::{Error, Result};

/// The ids to switch to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ids {
    /// User id.
    pub uid: libc::uid_t,
    /// Group id.
    pub gid: libc::gid_t,
}

/// Looks up `user` (and `group`, default: the user's primary group).
pub fn resolve(user: &str, group: Option<&str>) -> Result<Ids> {
    let (uid, primary) = lookup_user(user)?;
    let gid = match group {
        Some(group) => lookup_group(group)?,
        None => primary,
    };
    Ok(Ids { uid, gid })
}

/// Switches the process to `ids`. Call it before starting any thread.
pub fn drop_to(ids: Ids) -> Result<()> {
    let gids = [ids.gid];
    // SAFETY: plain syscalls with a valid one-element group list.
    unsafe {
        if libc::setgroups(1, gids.as_ptr()) != 0 {
            return Err(Error::Privileges(format!(
                "setgroups: {}",
                std::io::Error::last_os_error()
            )));
        }
        if libc::setgid(ids.gid) != 0 {
            return Err(Error::Privileges(format!(
                "setgid({}): {}",
                ids.gid,
                std::io::Error::last_os_error()
            )));
        }
        if libc::setuid(ids.uid) != 0 {
            return Err(Error::Privileges(format!(
                "setuid({}): {}",
                ids.uid,
                std::io::Error::last_os_error()
            )));
        }
        if ids.uid != 0 && libc::setuid(0) == 0 {
            return Err(Error::Privileges("root could be regained after setuid".into()));
        }
    }
    Ok(())
}

/// The uid and primary gid of `name`.
fn lookup_user(name: &str) -> Result<(libc::uid_t, libc::gid_t)> {
    let cname =
        CString::new(name).map_err(|_| Error::Privileges(format!("bad user name {name:?}")))?;
    // SAFETY: all-zero is a valid `passwd`; getpwnam_r writes into it and `buf`.
    let mut entry: libc::passwd = unsafe { std::mem::zeroed() };
    let mut buf = vec![0 as libc::c_char; 16384];
    let mut found: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: every pointer is valid for the call and `buf.len()` is its size.
    let rc = unsafe {
        libc::getpwnam_r(cname.as_ptr(), &mut entry, buf.as_mut_ptr(), buf.len(), &mut found)
    };
    if rc != 0 || found.is_null() {
        return Err(Error::Privileges(format!("unknown user `{name}`")));
    }
    Ok((entry.pw_uid, entry.pw_gid))
}

/// The gid of group `name`.
pub fn lookup_group(name: &str) -> Result<libc::gid_t> {
    let cname =
        CString::new(name).map_err(|_| Error::Privileges(format!("bad group name {name:?}")))?;
    // SAFETY: all-zero is a valid `group`; getgrnam_r writes into it and `buf`.
    let mut entry: libc::group = unsafe { std::mem::zeroed() };
    let mut buf = vec![0 as libc::c_char; 16384];
    let mut found: *mut libc::group = std::ptr::null_mut();
    // SAFETY: every pointer is valid for the call and `buf.len()` is its size.
    let rc = unsafe {
        libc::getgrnam_r(cname.as_ptr(), &mut entry, buf.as_mut_ptr(), buf.len(), &mut found)
    };
    if rc != 0 || found.is_null() {
        return Err(Error::Privileges(format!("unknown group `{name}`")));
    }
    Ok(entry.gr_gid)
}

/// Whether user `uid` is a member of group `gid` (primary or supplementary).
pub fn in_group(uid: libc::uid_t, gid: libc::gid_t) -> bool {
    // SAFETY: all-zero is a valid `passwd`; getpwuid_r writes into it and `buf`.
    let mut entry: libc::passwd = unsafe { std::mem::zeroed() };
    let mut buf = vec![0 as libc::c_char; 16384];
    let mut found: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: every pointer is valid for the call and `buf.len()` is its size.
    let rc = unsafe { libc::getpwuid_r(uid, &mut entry, buf.as_mut_ptr(), buf.len(), &mut found) };
    if rc != 0 || found.is_null() {
        return false;
    }
    if entry.pw_gid == gid {
        return true;
    }
    let mut groups = vec![0 as libc::gid_t; 256];
    let mut count = groups.len() as libc::c_int;
    // SAFETY: `pw_name` points into `buf`, alive here; `groups` holds `count` entries.
    let rc =
        unsafe { libc::getgrouplist(entry.pw_name, entry.pw_gid, groups.as_mut_ptr(), &mut count) };
    let count = usize::try_from(count).unwrap_or(0).min(groups.len());
    rc >= 0 && groups.iter().take(count).any(|&g| g == gid)
}

/// Creates `dir` (mode 0750) for `ids`, the user the server switches to, when it does
/// not exist yet: the storage directory of a server started as root. One that exists
/// is left as it is (the operator's choice); the storage lock says if it is unusable.
pub fn make_dir_for(dir: &std::path::Path, ids: Ids) -> Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    if dir.exists() {
        return Ok(());
    }
    let fail = |source| Error::File { path: dir.to_owned(), source };
    std::fs::DirBuilder::new().recursive(true).mode(0o750).create(dir).map_err(fail)?;
    std::os::unix::fs::chown(dir, Some(ids.uid), Some(ids.gid)).map_err(fail)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_root_and_refuses_unknown_names() {
        assert_eq!(resolve("root", None).unwrap(), Ids { uid: 0, gid: 0 });
        assert_eq!(resolve("root", Some("root")).unwrap(), Ids { uid: 0, gid: 0 });
        assert!(resolve("no-such-user-tern", None)
            .unwrap_err()
            .to_string()
            .contains("unknown user"));
        assert!(resolve("root", Some("no-such-group-tern")).is_err());
        assert!(resolve("ro\0ot", None).is_err());
        assert!(in_group(0, 0), "root is in its own group");
    }
}
