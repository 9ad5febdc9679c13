//! One AF_XDP socket with its UMEM and its four rings, behind a safe API: the only
//! `unsafe` of the XDP data plane is here.
//!
//! The protocol is the kernel's (`Documentation/networking/af_xdp.rst`): the UMEM is one
//! anonymous mapping cut into [`FRAME_SIZE`] frames, registered with `XDP_UMEM_REG`; the
//! fill and RX rings carry frames to and from the kernel for receiving, the TX and
//! completion rings for sending. Each ring is a single-producer single-consumer queue in
//! memory shared with the kernel: the producer writes descriptors then publishes its
//! index with a release store, the consumer reads the index with an acquire load before
//! the descriptors. The ring types here hand out only the slots that the index exchange
//! made theirs ([`ProducerRing::reserve`], [`ConsumerRing::peek`]), and [`Umem`] only
//! the bytes of one frame, so safe code cannot reach memory the kernel may be writing.
//!
//! The socket is bound with `XDP_USE_NEED_WAKEUP` and without a copy mode flag: the
//! kernel takes zero-copy where the driver has it and copies otherwise (veth, generic
//! XDP); [`XskSocket::zero_copy`] says which it chose.

use std::io;
use std::mem::size_of;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// Bytes per UMEM frame: one packet of up to about 3.8 KB after the kernel's headroom.
pub const FRAME_SIZE: u32 = 4096;
/// Slots in each ring; the UMEM holds this many frames for receiving and as many for
/// sending.
pub const RING_SIZE: u32 = 2048;
/// Frames in the UMEM.
pub const FRAMES: u32 = 2 * RING_SIZE;

/// A mapping of memory, unmapped on drop.
#[derive(Debug)]
struct Mapping {
    base: NonNull<u8>,
    len: usize,
}

impl Mapping {
    /// `mmap(NULL, len, READ|WRITE, flags, fd, offset)`.
    fn new(len: usize, flags: i32, fd: i32, offset: i64) -> io::Result<Mapping> {
        let prot = libc::PROT_READ | libc::PROT_WRITE;
        // SAFETY: a fresh mapping at an address of the kernel's choosing; nothing Rust
        // owns is touched.
        let ptr = unsafe { libc::mmap(std::ptr::null_mut(), len, prot, flags, fd, offset) };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let base = NonNull::new(ptr.cast::<u8>()).ok_or_else(io::Error::last_os_error)?;
        Ok(Mapping { base, len })
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: `base`/`len` are exactly what `mmap` returned, unmapped once; no
        // reference into the mapping outlives its owner (they borrow it).
        unsafe { libc::munmap(self.base.as_ptr().cast(), self.len) };
    }
}

/// The UMEM: [`FRAMES`] frames of [`FRAME_SIZE`] bytes, addressed by offset.
#[derive(Debug)]
pub struct Umem {
    area: Mapping,
}

impl Umem {
    /// Shared, not private: `--daemon` forks after the sockets are made, and the pages
    /// the kernel pinned must stay the pages the daemon writes (a private mapping would
    /// give the child copies of them).
    fn new() -> io::Result<Umem> {
        let len = FRAMES as usize * FRAME_SIZE as usize;
        let flags = libc::MAP_SHARED | libc::MAP_ANONYMOUS | libc::MAP_POPULATE;
        Ok(Umem { area: Mapping::new(len, flags, -1, 0)? })
    }

    /// The `len` bytes at `addr` in a received frame; `None` out of bounds or across a
    /// frame's end.
    pub fn received(&self, addr: u64, len: u32) -> Option<&[u8]> {
        let start = usize::try_from(addr).ok()?;
        let end = start.checked_add(len as usize)?;
        let frame_end = (start / FRAME_SIZE as usize + 1) * FRAME_SIZE as usize;
        if end > self.area.len || end > frame_end {
            return None;
        }
        // SAFETY: the range lies in the mapping (checked above) within one frame, which
        // the kernel handed over on the RX ring and takes back only from the fill ring,
        // after the borrow of `self` ends.
        Some(unsafe {
            std::slice::from_raw_parts(self.area.base.as_ptr().add(start), len as usize)
        })
    }

    /// Starts loading the first bytes of the frame at `addr` into the cache: the kernel
    /// wrote it, on a veth on another CPU, so the first read of its headers waits for
    /// memory; prefetching a batch at once overlaps those waits.
    pub fn prefetch(&self, addr: u64) {
        #[cfg(target_arch = "x86_64")]
        if let Ok(offset) = usize::try_from(addr) {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let at = self.area.base.as_ptr().wrapping_add(offset % self.area.len);
            // SAFETY: a prefetch is only a hint: it reads nothing the program sees and
            // cannot fault (the address is inside the mapping anyway).
            unsafe { _mm_prefetch::<_MM_HINT_T0>(at as *const i8) };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = addr;
    }

    /// A received frame (`addr`, `len`) and a whole other frame, `out`, to write into.
    /// `None` when out of bounds, or when both are in the same frame.
    pub fn received_and_out(
        &mut self,
        addr: u64,
        len: u32,
        out: u64,
    ) -> Option<(&[u8], &mut [u8])> {
        let frame = FRAME_SIZE as u64;
        let out_start = usize::try_from(out / frame * frame).ok()?;
        let out_end = out_start.checked_add(FRAME_SIZE as usize)?;
        if out_end > self.area.len || addr / frame == out / frame {
            return None;
        }
        let query = self.received(addr, len)?;
        let query = (query.as_ptr(), query.len());
        // SAFETY: `out` is a whole frame inside the mapping, distinct from the query's
        // frame (checked above), so the two slices do not overlap; the caller took it
        // from its free list, so the kernel does not use it; `&mut self` keeps any
        // other slice of the UMEM from living as long.
        unsafe {
            let out = std::slice::from_raw_parts_mut(
                self.area.base.as_ptr().add(out_start),
                FRAME_SIZE as usize,
            );
            Some((std::slice::from_raw_parts(query.0, query.1), out))
        }
    }

    fn registration(&self) -> libc::xdp_umem_reg {
        libc::xdp_umem_reg {
            addr: self.area.base.as_ptr() as u64,
            len: self.area.len as u64,
            chunk_size: FRAME_SIZE,
            headroom: 0,
            flags: 0,
            tx_metadata_len: 0,
        }
    }
}

/// A ring mapped from the socket: the shared indices and the descriptor array.
#[derive(Debug)]
struct Ring<T> {
    producer: NonNull<AtomicU32>,
    consumer: NonNull<AtomicU32>,
    flags: NonNull<AtomicU32>,
    descs: NonNull<T>,
    /// Our own index (the producer's for a producer ring, the consumer's otherwise).
    local: u32,
    /// The other side's index as last read.
    peer: u32,
    /// Slots reserved or peeked and not yet submitted or released.
    held: u32,
    _map: Mapping,
}

impl<T: Copy> Ring<T> {
    /// Maps the ring of `entries` slots at page offset `pgoff` of socket `fd`.
    fn map(fd: i32, off: &libc::xdp_ring_offset, entries: u32, pgoff: i64) -> io::Result<Self> {
        let len = off.desc as usize + entries as usize * size_of::<T>();
        let map = Mapping::new(len, libc::MAP_SHARED | libc::MAP_POPULATE, fd, pgoff)?;
        let at = |offset: u64, size: usize| -> io::Result<NonNull<u8>> {
            let offset = usize::try_from(offset).map_err(io::Error::other)?;
            if offset.checked_add(size).is_none_or(|end| end > len) || offset % 4 != 0 {
                return Err(io::Error::other("ring offsets out of the mapping"));
            }
            // SAFETY: `offset + size` is within the mapping (checked above).
            Ok(unsafe { map.base.add(offset) })
        };
        let words = size_of::<AtomicU32>();
        Ok(Ring {
            producer: at(off.producer, words)?.cast(),
            consumer: at(off.consumer, words)?.cast(),
            flags: at(off.flags, words)?.cast(),
            descs: at(off.desc, entries as usize * size_of::<T>())?.cast(),
            local: 0,
            peer: 0,
            held: 0,
            _map: map,
        })
    }

    fn index(&self, which: NonNull<AtomicU32>) -> &AtomicU32 {
        // SAFETY: the index words are inside the mapping `self` owns, 4-byte aligned
        // (checked in `map`), and only ever accessed atomically by both sides.
        unsafe { which.as_ref() }
    }

    fn slot(&self, n: u32) -> *mut T {
        let at = (self.local.wrapping_add(n) & (RING_SIZE - 1)) as usize;
        // SAFETY: `at` < RING_SIZE, the ring's slot count, so it stays in the array.
        unsafe { self.descs.as_ptr().add(at) }
    }
}

/// A ring user space fills (fill, TX).
#[derive(Debug)]
pub struct ProducerRing<T>(Ring<T>);

impl<T: Copy> ProducerRing<T> {
    /// Takes up to `want` free slots for [`write`](Self::write); returns how many.
    pub fn reserve(&mut self, want: u32) -> u32 {
        let ring = &mut self.0;
        let mut free = RING_SIZE - ring.local.wrapping_sub(ring.peer);
        if free < want {
            ring.peer = ring.index(ring.consumer).load(Ordering::Acquire);
            free = RING_SIZE - ring.local.wrapping_sub(ring.peer);
        }
        ring.held = want.min(free);
        ring.held
    }

    /// Writes reserved slot `n`; ignored past the reservation.
    pub fn write(&mut self, n: u32, value: T) {
        if n < self.0.held {
            // SAFETY: a reserved slot: the kernel has consumed it and will not read it
            // until `submit` publishes it.
            unsafe { self.0.slot(n).write(value) };
        }
    }

    /// Hands the first `count` reserved slots to the kernel.
    pub fn submit(&mut self, count: u32) {
        let ring = &mut self.0;
        ring.local = ring.local.wrapping_add(count.min(ring.held));
        ring.held = 0;
        ring.index(ring.producer).store(ring.local, Ordering::Release);
    }

    /// Slots submitted that the kernel has not consumed yet.
    pub fn pending(&self) -> u32 {
        let consumer = self.0.index(self.0.consumer).load(Ordering::Acquire);
        self.0.local.wrapping_sub(consumer)
    }

    /// Whether the kernel asks to be woken (`XDP_RING_NEED_WAKEUP`).
    pub fn needs_wakeup(&self) -> bool {
        let flags = self.0.index(self.0.flags).load(Ordering::Relaxed);
        flags & libc::XDP_RING_NEED_WAKEUP != 0
    }
}

/// A ring the kernel fills (RX, completion).
#[derive(Debug)]
pub struct ConsumerRing<T>(Ring<T>);

impl<T: Copy> ConsumerRing<T> {
    /// Makes up to `max` filled slots readable; returns how many.
    pub fn peek(&mut self, max: u32) -> u32 {
        let ring = &mut self.0;
        let mut ready = ring.peer.wrapping_sub(ring.local);
        if ready < max {
            ring.peer = ring.index(ring.producer).load(Ordering::Acquire);
            ready = ring.peer.wrapping_sub(ring.local);
        }
        ring.held = max.min(ready).min(RING_SIZE);
        ring.held
    }

    /// Reads peeked slot `n`; `None` past what was peeked.
    pub fn read(&self, n: u32) -> Option<T> {
        // SAFETY: a peeked slot: the kernel published it (acquire load in `peek`) and
        // will not write it again until `release`.
        (n < self.0.held).then(|| unsafe { self.0.slot(n).read() })
    }

    /// Gives the first `count` peeked slots back to the kernel.
    pub fn release(&mut self, count: u32) {
        let ring = &mut self.0;
        ring.local = ring.local.wrapping_add(count.min(ring.held));
        ring.held = 0;
        ring.index(ring.consumer).store(ring.local, Ordering::Release);
    }
}

/// An AF_XDP socket bound to one queue of one interface, with its UMEM and rings.
/// Fields drop in order: the rings are unmapped, the socket closed, then the UMEM freed.
#[derive(Debug)]
pub struct XskSocket {
    /// Received frames.
    pub rx: ConsumerRing<libc::xdp_desc>,
    /// Frames to send.
    pub tx: ProducerRing<libc::xdp_desc>,
    /// Frames given to the kernel to receive into.
    pub fill: ProducerRing<u64>,
    /// Frames the kernel has sent.
    pub completion: ConsumerRing<u64>,
    fd: OwnedFd,
    /// The frames.
    pub umem: Umem,
    /// Whether the kernel chose zero-copy (else it copies each frame).
    pub zero_copy: bool,
    /// The queue it is bound to.
    pub queue: u32,
}

// SAFETY: the socket owns its mappings and descriptor; nothing in it is tied to the
// thread that made it (the pointers are to memory shared with the kernel, not thread-
// local), and it is used by one thread at a time (`&mut` for every ring operation).
unsafe impl Send for XskSocket {}

fn check(rc: i32) -> io::Result<()> {
    if rc < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

fn set_option<T>(fd: i32, name: i32, value: &T) -> io::Result<()> {
    let len = size_of::<T>() as libc::socklen_t;
    // SAFETY: `value` points at a `T` of `len` bytes, alive for the call.
    check(unsafe { libc::setsockopt(fd, libc::SOL_XDP, name, (value as *const T).cast(), len) })
}

fn get_option<T: Copy>(fd: i32, name: i32, mut value: T) -> io::Result<T> {
    let mut len = size_of::<T>() as libc::socklen_t;
    // SAFETY: `value` is a local `T` of `len` bytes the kernel writes at most `len` of.
    let rc = unsafe {
        libc::getsockopt(fd, libc::SOL_XDP, name, (&mut value as *mut T).cast(), &mut len)
    };
    check(rc)?;
    Ok(value)
}

impl XskSocket {
    /// Opens a socket on queue `queue` of interface `ifindex`, with the first
    /// [`RING_SIZE`] frames given to the fill ring and the rest left for sending.
    pub fn open(ifindex: u32, queue: u32) -> io::Result<XskSocket> {
        // SAFETY: plain socket creation; the descriptor is owned at once below.
        let raw = unsafe { libc::socket(libc::AF_XDP, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) };
        check(raw)?;
        // SAFETY: a fresh descriptor nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let umem = Umem::new()?;
        set_option(raw, libc::XDP_UMEM_REG, &umem.registration())?;
        for name in [
            libc::XDP_UMEM_FILL_RING,
            libc::XDP_UMEM_COMPLETION_RING,
            libc::XDP_RX_RING,
            libc::XDP_TX_RING,
        ] {
            set_option(raw, name, &(RING_SIZE as i32))?;
        }
        // SAFETY: all-zero is a valid value of this plain C struct.
        let offsets = get_option(raw, libc::XDP_MMAP_OFFSETS, unsafe {
            std::mem::zeroed::<libc::xdp_mmap_offsets>()
        })?;
        let fill = Ring::map(raw, &offsets.fr, RING_SIZE, libc::XDP_UMEM_PGOFF_FILL_RING as i64)?;
        let completion =
            Ring::map(raw, &offsets.cr, RING_SIZE, libc::XDP_UMEM_PGOFF_COMPLETION_RING as i64)?;
        let rx = Ring::map(raw, &offsets.rx, RING_SIZE, libc::XDP_PGOFF_RX_RING)?;
        let tx = Ring::map(raw, &offsets.tx, RING_SIZE, libc::XDP_PGOFF_TX_RING)?;
        let mut socket = XskSocket {
            rx: ConsumerRing(rx),
            tx: ProducerRing(tx),
            fill: ProducerRing(fill),
            completion: ConsumerRing(completion),
            fd,
            umem,
            zero_copy: false,
            queue,
        };
        let reserved = socket.fill.reserve(RING_SIZE);
        for n in 0..reserved {
            socket.fill.write(n, u64::from(n) * u64::from(FRAME_SIZE));
        }
        socket.fill.submit(reserved);
        socket.bind(ifindex)?;
        Ok(socket)
    }

    fn bind(&mut self, ifindex: u32) -> io::Result<()> {
        let addr = libc::sockaddr_xdp {
            sxdp_family: libc::AF_XDP as u16,
            sxdp_flags: libc::XDP_USE_NEED_WAKEUP,
            sxdp_ifindex: ifindex,
            sxdp_queue_id: self.queue,
            sxdp_shared_umem_fd: 0,
        };
        let len = size_of::<libc::sockaddr_xdp>() as libc::socklen_t;
        let ptr = (&addr as *const libc::sockaddr_xdp).cast::<libc::sockaddr>();
        // SAFETY: `addr` is a complete `sockaddr_xdp` of `len` bytes, alive for the call.
        check(unsafe { libc::bind(self.fd.as_raw_fd(), ptr, len) })?;
        let options =
            get_option(self.fd.as_raw_fd(), libc::XDP_OPTIONS, libc::xdp_options { flags: 0 })?;
        self.zero_copy = options.flags & libc::XDP_OPTIONS_ZEROCOPY != 0;
        Ok(())
    }

    /// The socket's descriptor, for the XSKMAP.
    pub fn raw_fd(&self) -> i32 {
        self.fd.as_raw_fd()
    }

    /// Tells the kernel to send what the TX ring holds (`sendto` with no data). Returns
    /// `false` when the kernel stopped before the ring was empty (`EAGAIN`: the copy
    /// path sends up to 32 frames per call) or the device was busy.
    pub fn kick(&self) -> bool {
        // SAFETY: a `sendto` of no bytes to no address: no memory is passed.
        let rc = unsafe {
            libc::sendto(
                self.fd.as_raw_fd(),
                std::ptr::null(),
                0,
                libc::MSG_DONTWAIT,
                std::ptr::null(),
                0,
            )
        };
        rc >= 0
    }

    /// Waits until the RX ring has frames or `timeout` passes; also wakes the driver
    /// when the fill ring asks for it (`poll` does).
    pub fn wait(&self, timeout: Duration) {
        let mut fd = libc::pollfd { fd: self.fd.as_raw_fd(), events: libc::POLLIN, revents: 0 };
        let ms = i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX);
        // SAFETY: one `pollfd` on the stack, alive for the call.
        unsafe { libc::poll(&mut fd, 1, ms) };
    }

    /// The kernel's counters for this socket (`XDP_STATISTICS`).
    pub fn statistics(&self) -> io::Result<libc::xdp_statistics> {
        // SAFETY: all-zero is a valid value of this plain C struct.
        get_option(self.fd.as_raw_fd(), libc::XDP_STATISTICS, unsafe { std::mem::zeroed() })
    }
}
