//! The `bpf(2)` calls the XDP path makes, through `libc::syscall`: create the XSKMAP,
//! load the program of [`super::program`], put a socket in the map, and attach the
//! program to an interface with a BPF link.
//!
//! A BPF link (`BPF_LINK_CREATE` with `BPF_XDP`, Linux 5.9) rather than the older
//! netlink attachment: the kernel releases a link, and detaches its program, when the
//! last reference to it goes (`bpf_link_put` in `kernel/bpf/syscall.c`; ours are never
//! pinned), so the program goes when `ternd` exits, however it exits — a crash or
//! `SIGKILL` leaves nothing attached for the next start to clean up (the descriptors are
//! close-on-exec, so no child keeps one). An interface that already has an XDP program
//! attached by someone else is refused (`EBUSY`/`EEXIST`), never replaced.

use std::ffi::CStr;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use super::program::Insn;

// `enum bpf_cmd`.
const BPF_MAP_CREATE: libc::c_long = 0;
const BPF_MAP_UPDATE_ELEM: libc::c_long = 2;
const BPF_PROG_LOAD: libc::c_long = 5;
const BPF_LINK_CREATE: libc::c_long = 28;
/// `BPF_MAP_TYPE_XSKMAP`.
const MAP_TYPE_XSKMAP: u32 = 17;
/// `BPF_PROG_TYPE_XDP`.
const PROG_TYPE_XDP: u32 = 6;
/// `BPF_XDP`, the attach type of an XDP link.
const ATTACH_XDP: u32 = 37;
/// `XDP_FLAGS_SKB_MODE`: generic XDP, in the kernel's receive path after the driver.
pub const XDP_FLAGS_SKB_MODE: u32 = 1 << 1;
/// `XDP_FLAGS_DRV_MODE`: native XDP, in the driver.
pub const XDP_FLAGS_DRV_MODE: u32 = 1 << 2;
/// Bytes kept of the verifier's log.
const LOG_SIZE: usize = 64 * 1024;

/// The `bpf_attr` members of `BPF_MAP_CREATE`.
#[repr(C)]
#[derive(Default)]
struct MapCreate {
    map_type: u32,
    key_size: u32,
    value_size: u32,
    max_entries: u32,
    map_flags: u32,
    inner_map_fd: u32,
    numa_node: u32,
    map_name: [u8; 16],
}

/// The `bpf_attr` members of `BPF_MAP_UPDATE_ELEM`.
#[repr(C)]
#[derive(Default)]
struct MapUpdate {
    map_fd: u32,
    _pad: u32,
    key: u64,
    value: u64,
    flags: u64,
}

/// The `bpf_attr` members of `BPF_PROG_LOAD` up to `expected_attach_type`.
#[repr(C)]
#[derive(Default)]
struct ProgLoad {
    prog_type: u32,
    insn_cnt: u32,
    insns: u64,
    license: u64,
    log_level: u32,
    log_size: u32,
    log_buf: u64,
    kern_version: u32,
    prog_flags: u32,
    prog_name: [u8; 16],
    prog_ifindex: u32,
    expected_attach_type: u32,
}

/// The `bpf_attr` members of `BPF_LINK_CREATE`.
#[repr(C)]
#[derive(Default)]
struct LinkCreate {
    prog_fd: u32,
    target_ifindex: u32,
    attach_type: u32,
    flags: u32,
}

/// One `bpf(cmd, attr, size)`; a new descriptor when the command makes one.
///
/// # Safety
/// `attr` must be the `bpf_attr` layout `cmd` expects, and every address in it must
/// point at memory valid for what the command does with it, for the call's duration.
unsafe fn bpf<T>(cmd: libc::c_long, attr: &mut T) -> io::Result<i64> {
    let size = std::mem::size_of::<T>();
    // SAFETY: the caller vouches for the attribute's layout and pointers; `size` is its
    // true size, and the kernel reads (or writes) no more than that of it.
    let rc = unsafe { libc::syscall(libc::SYS_bpf, cmd, attr as *mut T, size) };
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(rc)
}

fn owned(fd: i64) -> io::Result<OwnedFd> {
    let fd = i32::try_from(fd).map_err(|_| io::Error::other("descriptor out of range"))?;
    // SAFETY: the kernel just returned this descriptor to us, and nothing else owns it.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn name16(name: &str) -> [u8; 16] {
    let mut out = [0; 16];
    for (slot, byte) in out.iter_mut().zip(name.bytes().take(15)) {
        *slot = byte;
    }
    out
}

/// Creates an XSKMAP of `entries` slots (one per queue of the interface).
pub fn create_xskmap(entries: u32) -> io::Result<OwnedFd> {
    let mut attr = MapCreate {
        map_type: MAP_TYPE_XSKMAP,
        key_size: 4,
        value_size: 4,
        max_entries: entries,
        map_name: name16("tern_xsks"),
        ..Default::default()
    };
    // SAFETY: a `BPF_MAP_CREATE` attribute without pointers.
    owned(unsafe { bpf(BPF_MAP_CREATE, &mut attr) }?)
}

/// Puts socket `xsk` in slot `queue` of the XSKMAP `map`.
pub fn insert_socket(map: &OwnedFd, queue: u32, xsk: i32) -> io::Result<()> {
    let key = queue;
    let value = xsk as u32;
    let mut attr = MapUpdate {
        map_fd: map.as_raw_fd() as u32,
        key: &key as *const u32 as u64,
        value: &value as *const u32 as u64,
        ..Default::default()
    };
    // SAFETY: `key` and `value` are locals of the map's 4-byte key and value size,
    // alive for the call.
    unsafe { bpf(BPF_MAP_UPDATE_ELEM, &mut attr) }.map(drop)
}

/// Loads an XDP program. On failure the error carries the end of the verifier's log
/// (the load is tried again with the log on, so that a good load writes none).
pub fn load_program(insns: &[Insn], name: &str) -> io::Result<OwnedFd> {
    let error = match load_with_log(insns, name, &mut []) {
        Ok(fd) => return Ok(fd),
        Err(e) => e,
    };
    let mut log = vec![0u8; LOG_SIZE];
    if let Ok(fd) = load_with_log(insns, name, &mut log) {
        return Ok(fd); // refused without a log, taken with one: take it
    }
    let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
    let text = String::from_utf8_lossy(log.get(..end).unwrap_or(&[]));
    let mut tail: Vec<&str> = text.lines().rev().take(12).collect();
    tail.reverse();
    Err(io::Error::new(error.kind(), format!("{error}; verifier: {}", tail.join(" | "))))
}

/// One `BPF_PROG_LOAD`, with the verifier's log into `log` when it is not empty.
fn load_with_log(insns: &[Insn], name: &str, log: &mut [u8]) -> io::Result<OwnedFd> {
    let license: &CStr = c"MPL-2.0";
    let count = u32::try_from(insns.len()).map_err(|_| io::Error::other("program too long"))?;
    let mut attr = ProgLoad {
        prog_type: PROG_TYPE_XDP,
        insn_cnt: count,
        insns: insns.as_ptr() as u64,
        license: license.as_ptr() as u64,
        log_level: u32::from(!log.is_empty()),
        log_size: u32::try_from(log.len()).unwrap_or(0),
        log_buf: if log.is_empty() { 0 } else { log.as_mut_ptr() as u64 },
        prog_name: name16(name),
        expected_attach_type: ATTACH_XDP,
        ..Default::default()
    };
    // SAFETY: `insns` (count instructions of the kernel's layout, `Insn` is repr(C)),
    // the NUL-terminated license and the log buffer of `log_size` bytes outlive the
    // call.
    owned(unsafe { bpf(BPF_PROG_LOAD, &mut attr) }?)
}

/// Attaches `program` to interface `ifindex` in the mode `flags` names; the program
/// stays attached while the returned link is open.
pub fn attach(program: &OwnedFd, ifindex: u32, flags: u32) -> io::Result<OwnedFd> {
    let mut attr = LinkCreate {
        prog_fd: program.as_raw_fd() as u32,
        target_ifindex: ifindex,
        attach_type: ATTACH_XDP,
        flags,
    };
    // SAFETY: a `BPF_LINK_CREATE` attribute without pointers.
    owned(unsafe { bpf(BPF_LINK_CREATE, &mut attr) }?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attribute_layouts_match_the_kernel() {
        // Offsets from include/uapi/linux/bpf.h.
        assert_eq!(std::mem::size_of::<MapCreate>(), 44);
        assert_eq!(std::mem::size_of::<MapUpdate>(), 32);
        assert_eq!(std::mem::offset_of!(ProgLoad, prog_name), 48);
        assert_eq!(std::mem::offset_of!(ProgLoad, expected_attach_type), 68);
        assert_eq!(std::mem::size_of::<Insn>(), 8);
    }

    #[test]
    fn names_are_cut_to_fifteen_bytes() {
        assert_eq!(&name16("tern_dns"), b"tern_dns\0\0\0\0\0\0\0\0");
        assert_eq!(name16("a_name_longer_than_sixteen")[15], 0);
    }
}
