//! Counting a zone's heap: a global allocator that keeps the bytes each thread has
//! allocated and not freed (what heaptrack's "leaked" cost counts: the sizes asked for,
//! not the allocator's slack), and the zones `bench/genzone.py` makes, written here
//! so that a test or example builds them without Python.
//!
//! Shared by `tests/small_zone_heap.rs` and `examples/zone_heap.rs` (by path).

#![allow(dead_code)] // each user takes a different part

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::fmt::Write as _;

use tern_wire::Name;
use tern_zone::ZoneContents;

/// The system allocator, counting each thread's live bytes.
pub struct Counting;

thread_local! {
    /// Bytes this thread allocated minus those it freed (a free on another thread than
    /// the allocation's counts there).
    static LIVE: Cell<isize> = const { Cell::new(0) };
    /// Allocations this thread made minus those it freed.
    static BLOCKS: Cell<isize> = const { Cell::new(0) };
    /// As `LIVE`, in glibc's chunk sizes (the size asked for, its 8-byte header, rounded
    /// up to 16, at least 32): what the allocations take from the heap.
    static CHUNKS: Cell<isize> = const { Cell::new(0) };
}

/// What glibc's malloc takes for an allocation of `size` bytes (x86-64).
fn chunk(size: usize) -> isize {
    ((size + 8 + 15) & !15).max(32) as isize
}

fn count(delta: isize) {
    // `try_with`: a thread being torn down may still free memory.
    let _ = LIVE.try_with(|live| live.set(live.get() + delta));
}

fn blocks(size: usize, sign: isize) {
    let _ = BLOCKS.try_with(|b| b.set(b.get() + sign));
    let _ = CHUNKS.try_with(|c| c.set(c.get() + sign * chunk(size)));
}

// SAFETY: every call is passed to `System` unchanged; only a counter is kept beside.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size() as isize);
        blocks(layout.size(), 1);
        // SAFETY: as the caller promised for `layout`.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size() as isize);
        blocks(layout.size(), 1);
        // SAFETY: as the caller promised for `layout`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count(-(layout.size() as isize));
        blocks(layout.size(), -1);
        // SAFETY: as the caller promised: `ptr` came from this allocator with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size as isize - layout.size() as isize);
        blocks(layout.size(), -1);
        blocks(new_size, 1);
        // SAFETY: as the caller promised.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// This thread's live heap bytes.
pub fn live() -> isize {
    LIVE.with(Cell::get)
}

/// This thread's live allocations and the glibc chunk bytes they take.
pub fn blocks_live() -> (isize, isize) {
    (BLOCKS.with(Cell::get), CHUNKS.with(Cell::get))
}

/// The allocations that `make`'s result holds when `make` returns and the glibc chunk
/// bytes they take, with the result.
pub fn held_blocks<T>(make: impl FnOnce() -> T) -> (T, isize, isize) {
    let (n, c) = blocks_live();
    let made = make();
    let (n2, c2) = blocks_live();
    (made, n2 - n, c2 - c)
}

/// The heap that `make`'s result holds when `make` returns (what it allocated and did
/// not free), with the result.
pub fn held<T>(make: impl FnOnce() -> T) -> (T, usize) {
    let before = live();
    let made = make();
    (made, (live() - before).max(0) as usize)
}

/// The text of `genzone.py hosting`'s zone number `index` (15 records), with `origin`.
/// The random numbers of the generator are replaced by ones made from `index`: the
/// bytes differ, the sizes and shape do not.
pub fn hosting_zone(index: usize, origin: &str) -> String {
    let host = index % 250 + 1;
    let r = |k: usize| (index * 7 + k * 13) % 254 + 1;
    format!(
        "$ORIGIN {origin}\n$TTL 3600\n\
         @ IN SOA ns1.hoster.example. hostmaster.hoster.example. 2026112201 7200 3600 1209600 300\n\
         @ IN NS ns1.hoster.example.\n@ IN NS ns2.hoster.example.\n\
         @ IN A 203.0.113.{host}\n@ IN AAAA 2001:db8:{:x}::1\n\
         @ IN MX 10 mail\n@ IN MX 20 mx2\n\
         mail IN A 198.51.100.{}\nmx2 IN A 198.51.100.{}\n\
         @ IN TXT \"v=spf1 mx -all\"\nwww IN CNAME @\n\
         _sip._tcp IN SRV 10 60 5060 sip\nsip IN A 192.0.2.{host}\n\
         *.dyn IN A 192.0.2.{}\n@ IN CAA 0 issue \"ca.example\"\n",
        index % 65536,
        r(1),
        r(2),
        r(3),
    )
}

/// The origin of hosting zone `index`: a label of 4–14 characters, as `genzone.py`'s.
pub fn hosting_origin(index: usize) -> String {
    let letters = "abcdefghijklmnopqrstuvwxyz0123456789".as_bytes();
    let len = 4 + index * 5 % 11;
    let label: String =
        (0..len).map(|i| char::from(letters[(index * 31 + i * 17) % letters.len()])).collect();
    format!("{label}{index}.example.")
}

/// A zone like `genzone.py delegations`' (a top-level domain): an apex with three
/// in-zone name servers, then `count` delegations, 20% with two in-bailiwick name
/// servers and their glue, the others at one of 1,000 outside providers; 30% with a DS.
pub fn delegation_zone(count: usize) -> String {
    let mut text = String::with_capacity(count * 120);
    text.push_str(
        "$ORIGIN tld.\n$TTL 86400\n\
         @ IN SOA ns1 hostmaster 1 7200 3600 1209600 300\n\
         @ IN NS ns1\n@ IN NS ns2\n@ IN NS ns3\n\
         ns1 IN A 192.0.2.1\nns2 IN A 192.0.2.2\nns3 IN A 192.0.2.3\n",
    );
    for i in 0..count {
        let owner = format!("d{:x}x{}", i.wrapping_mul(0x9E37_79B9) % 0xFFFF_FFFF, i);
        if i % 5 == 0 {
            let _ = writeln!(text, "{owner} IN NS ns1.{owner}\n{owner} IN NS ns2.{owner}");
            let _ = writeln!(text, "ns1.{owner} IN A 198.51.{}.{}", i % 256, i / 256 % 256);
            let _ = writeln!(text, "ns2.{owner} IN AAAA 2001:db8:{:x}::53", i % 65536);
        } else {
            let p = i * 7 % 1000;
            let _ = writeln!(text, "{owner} IN NS ns1.p{p}.net.\n{owner} IN NS ns2.p{p}.net.");
        }
        if i % 10 < 3 {
            let _ = writeln!(text, "{owner} IN DS {} 13 2 {:064x}", i % 65536, i);
        }
    }
    text
}

/// Loads a zone from text; panics on an error (tests and examples only).
pub fn load(text: &str, origin: &str) -> ZoneContents {
    let origin: Name = origin.parse().expect("origin");
    let source = std::path::Path::new("heap");
    let loaded = tern_zone::load_bytes(text.as_bytes(), source, &origin, &Default::default())
        .expect("the zone loads");
    loaded.contents
}

/// Where one zone's heap goes, as far as the public API tells.
#[derive(Debug, Clone, Copy, Default)]
pub struct Parts {
    /// Every byte the snapshot holds, with the `Arc` the server keeps it in.
    pub total: usize,
    /// The snapshot itself in its `Arc` (16 bytes of counts).
    pub version: usize,
    /// The node table: 32 bytes a node, in its chunks.
    pub table: usize,
    /// The node data blobs: their bytes and their 8-byte headers.
    pub blobs: usize,
    /// Nodes in the table.
    pub nodes: usize,
}

impl Parts {
    /// The parts of `zone`, which holds `heap` bytes besides itself.
    pub fn of(zone: &ZoneContents, heap: usize) -> Parts {
        let version = 16 + std::mem::size_of::<ZoneContents>();
        let nodes = zone.node_count();
        let blobs = (0..nodes as u32)
            .filter_map(|id| zone.node(id))
            .filter(|n| !n.is_vacant())
            .map(|n| 8 + n.data().len())
            .sum();
        Parts { total: heap + version, version, table: nodes * 32, blobs, nodes }
    }

    /// What is left: the name index, the chunk lists, the origin, …
    pub fn rest(&self) -> usize {
        self.total.saturating_sub(self.version + self.table + self.blobs)
    }
}
