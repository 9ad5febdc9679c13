//! Conversions between the kernel's socket addresses and `std::net` addresses, and the
//! packet-info control messages that carry a datagram's destination address.
//!
//! The destination address of a query received on a wildcard socket comes in an
//! `IP_PKTINFO` / `IPV6_PKTINFO` control message; the answer carries the same message so
//! that it leaves from the address the client asked (quinn-udp does the same).

use std::mem::size_of;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};

/// Reads a socket address the kernel wrote into `storage` (`len` bytes of it).
pub fn from_raw(storage: &libc::sockaddr_storage, len: libc::socklen_t) -> Option<SocketAddr> {
    let len = usize::try_from(len).ok()?;
    match i32::from(storage.ss_family) {
        libc::AF_INET if len >= size_of::<libc::sockaddr_in>() => {
            // SAFETY: the family says the storage holds a `sockaddr_in`, `len` says it was
            // written in full, and `sockaddr_storage` is aligned for every address type.
            let sin =
                unsafe { &*(storage as *const libc::sockaddr_storage).cast::<libc::sockaddr_in>() };
            let ip = Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr));
            Some(SocketAddr::V4(SocketAddrV4::new(ip, u16::from_be(sin.sin_port))))
        }
        libc::AF_INET6 if len >= size_of::<libc::sockaddr_in6>() => {
            // SAFETY: as above, for `sockaddr_in6`.
            let sin6 = unsafe {
                &*(storage as *const libc::sockaddr_storage).cast::<libc::sockaddr_in6>()
            };
            let ip = Ipv6Addr::from(sin6.sin6_addr.s6_addr);
            let port = u16::from_be(sin6.sin6_port);
            Some(SocketAddr::V6(SocketAddrV6::new(
                ip,
                port,
                sin6.sin6_flowinfo,
                sin6.sin6_scope_id,
            )))
        }
        _ => None,
    }
}

/// The destination of a received datagram, as told by its packet-info message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Destination {
    /// No packet info (a socket bound to one address, or a truncated control buffer).
    Unknown,
    /// IPv4 destination address.
    V4(Ipv4Addr),
    /// IPv6 destination address and the interface it arrived on.
    V6(Ipv6Addr, u32),
}

impl Destination {
    /// The destination as an IP address, if known.
    pub fn ip(self) -> Option<IpAddr> {
        match self {
            Destination::Unknown => None,
            Destination::V4(ip) => Some(IpAddr::V4(ip)),
            Destination::V6(ip, _) => Some(IpAddr::V6(ip)),
        }
    }
}

/// Finds the packet-info message among the control messages of a received `msg`.
///
/// # Safety
/// `msg.msg_control` must point to `msg.msg_controllen` readable bytes written by the
/// kernel (or `msg_controllen` must be 0).
pub unsafe fn read_pktinfo(msg: &libc::msghdr) -> Destination {
    // SAFETY: the caller guarantees the control buffer; CMSG_FIRSTHDR/NXTHDR stay within
    // `msg_controllen` and return null at the end.
    let mut cmsg = unsafe { libc::CMSG_FIRSTHDR(msg) };
    while !cmsg.is_null() {
        // SAFETY: non-null headers returned by CMSG_* lie within the buffer.
        let header = unsafe { &*cmsg };
        // SAFETY: CMSG_DATA points at the payload of this header, whose length the
        // kernel set; the payload types are plain data read unaligned.
        let data = unsafe { libc::CMSG_DATA(cmsg) };
        // `cmsg_len` is `usize` on glibc and `u32` on musl.
        #[allow(clippy::useless_conversion)]
        let payload = usize::try_from(header.cmsg_len).unwrap_or(0);
        match (header.cmsg_level, header.cmsg_type) {
            (libc::IPPROTO_IP, libc::IP_PKTINFO)
                // SAFETY: CMSG_LEN is a pure size computation.
                if payload >= unsafe { libc::CMSG_LEN(size_of::<libc::in_pktinfo>() as u32) } as usize =>
            {
                // SAFETY: the length check above says the payload holds an `in_pktinfo`.
                let info = unsafe { data.cast::<libc::in_pktinfo>().read_unaligned() };
                return Destination::V4(Ipv4Addr::from(u32::from_be(info.ipi_addr.s_addr)));
            }
            (libc::IPPROTO_IPV6, libc::IPV6_PKTINFO)
                // SAFETY: CMSG_LEN is a pure size computation.
                if payload >= unsafe { libc::CMSG_LEN(size_of::<libc::in6_pktinfo>() as u32) } as usize =>
            {
                // SAFETY: the length check above says the payload holds an `in6_pktinfo`.
                let info = unsafe { data.cast::<libc::in6_pktinfo>().read_unaligned() };
                let ifindex = info.ipi6_ifindex;
                return Destination::V6(Ipv6Addr::from(info.ipi6_addr.s6_addr), ifindex);
            }
            _ => {}
        }
        // SAFETY: `cmsg` is a valid header of `msg`'s control buffer.
        cmsg = unsafe { libc::CMSG_NXTHDR(msg, cmsg) };
    }
    Destination::Unknown
}

/// Writes the packet-info message that makes an answer leave from `dst` into the control
/// buffer of `msg`, and sets `msg_controllen`; clears it when `dst` is unknown.
///
/// # Safety
/// `msg.msg_control` must point to at least [`CONTROL_SIZE`] writable bytes aligned for
/// `cmsghdr`, and `msg.msg_controllen` must be [`CONTROL_SIZE`] on entry.
pub unsafe fn write_pktinfo(msg: &mut libc::msghdr, dst: Destination) {
    // SAFETY: the caller guarantees the buffer; with msg_controllen >= CMSG_SPACE of the
    // payload, CMSG_FIRSTHDR returns the buffer start.
    let cmsg = unsafe { libc::CMSG_FIRSTHDR(msg) };
    if cmsg.is_null() {
        msg.msg_controllen = 0;
        return;
    }
    let (level, kind, size) = match dst {
        Destination::Unknown => {
            msg.msg_controllen = 0;
            return;
        }
        Destination::V4(_) => (libc::IPPROTO_IP, libc::IP_PKTINFO, size_of::<libc::in_pktinfo>()),
        Destination::V6(..) => {
            (libc::IPPROTO_IPV6, libc::IPV6_PKTINFO, size_of::<libc::in6_pktinfo>())
        }
    };
    // SAFETY: `cmsg` points into the caller's buffer, which has room for CMSG_SPACE(size)
    // (checked by the CONTROL_SIZE assertion below); the payload is written unaligned.
    unsafe {
        (*cmsg).cmsg_level = level;
        (*cmsg).cmsg_type = kind;
        (*cmsg).cmsg_len = libc::CMSG_LEN(size as u32) as _;
        let data = libc::CMSG_DATA(cmsg);
        match dst {
            Destination::V4(ip) => {
                data.cast::<libc::in_pktinfo>().write_unaligned(libc::in_pktinfo {
                    ipi_ifindex: 0,
                    ipi_spec_dst: libc::in_addr { s_addr: u32::from(ip).to_be() },
                    ipi_addr: libc::in_addr { s_addr: 0 },
                })
            }
            Destination::V6(ip, ifindex) => {
                data.cast::<libc::in6_pktinfo>().write_unaligned(libc::in6_pktinfo {
                    ipi6_addr: libc::in6_addr { s6_addr: ip.octets() },
                    ipi6_ifindex: ifindex,
                })
            }
            Destination::Unknown => {}
        }
        msg.msg_controllen = libc::CMSG_SPACE(size as u32) as _;
    }
}

/// Appends the message that has the kernel cut a datagram's payload into datagrams of
/// `size` bytes (`UDP_SEGMENT`, Linux 4.18) to the control messages of `msg` (after a
/// packet-info message, or alone), and grows `msg_controllen` by it.
///
/// # Safety
/// `msg.msg_control` must point to at least [`CONTROL_SIZE`] writable bytes aligned for
/// `cmsghdr`, and `msg.msg_controllen` must be what [`write_pktinfo`] left there.
pub unsafe fn append_segment_size(msg: &mut libc::msghdr, size: u16) {
    let at = msg.msg_controllen;
    // SAFETY: `at` is 0 or the CMSG_SPACE of a packet-info message, so the buffer has
    // room for SEGMENT_SPACE more bytes (the assertion below), aligned for cmsghdr.
    unsafe {
        let cmsg = msg.msg_control.cast::<u8>().add(at).cast::<libc::cmsghdr>();
        (*cmsg).cmsg_level = libc::SOL_UDP;
        (*cmsg).cmsg_type = libc::UDP_SEGMENT;
        (*cmsg).cmsg_len = libc::CMSG_LEN(size_of::<u16>() as u32) as _;
        libc::CMSG_DATA(cmsg).cast::<u16>().write_unaligned(size);
    }
    msg.msg_controllen = at + SEGMENT_SPACE;
}

/// Bytes of control buffer per datagram: room for one IPv6 packet-info message (40 bytes
/// on 64-bit Linux) and a segment size (24).
pub const CONTROL_SIZE: usize = 64;

// SAFETY: CMSG_SPACE only computes.
const SEGMENT_SPACE: usize = unsafe { libc::CMSG_SPACE(size_of::<u16>() as u32) } as usize;
// SAFETY: as above.
const PKTINFO6_SPACE: usize =
    unsafe { libc::CMSG_SPACE(size_of::<libc::in6_pktinfo>() as u32) } as usize;
const _: () = assert!(PKTINFO6_SPACE + SEGMENT_SPACE <= CONTROL_SIZE);

/// A control-message buffer aligned for `cmsghdr`.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(8))]
pub struct ControlBuf(pub [u8; CONTROL_SIZE]);

const _: () =
    assert!(size_of::<libc::in6_pktinfo>() + 2 * size_of::<libc::cmsghdr>() <= CONTROL_SIZE);

#[cfg(test)]
mod tests {
    use super::*;

    fn storage_of(addr: SocketAddr) -> (libc::sockaddr_storage, libc::socklen_t) {
        let raw = socket2::SockAddr::from(addr);
        // SAFETY (test): copying the bytes of a sockaddr of `raw.len()` bytes.
        let mut storage: libc::sockaddr_storage = unsafe { std::mem::zeroed() };
        unsafe {
            std::ptr::copy_nonoverlapping(
                raw.as_ptr().cast::<u8>(),
                (&mut storage as *mut libc::sockaddr_storage).cast::<u8>(),
                raw.len() as usize,
            );
        }
        (storage, raw.len())
    }

    #[test]
    fn socket_addresses_round_trip() {
        for text in ["127.0.0.2:5353", "[::1]:53", "[fe80::1%2]:853", "0.0.0.0:0"] {
            let addr: SocketAddr = text.parse().unwrap();
            let (storage, len) = storage_of(addr);
            assert_eq!(from_raw(&storage, len), Some(addr));
            assert_eq!(from_raw(&storage, len - 1), None, "short length refused");
        }
    }

    #[test]
    fn pktinfo_round_trip() {
        for dst in
            [Destination::V4(Ipv4Addr::new(127, 0, 0, 2)), Destination::V6(Ipv6Addr::LOCALHOST, 1)]
        {
            let mut control = ControlBuf([0; CONTROL_SIZE]);
            // SAFETY (test): a zeroed msghdr is valid; the control buffer outlives it.
            let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
            msg.msg_control = control.0.as_mut_ptr().cast();
            msg.msg_controllen = CONTROL_SIZE as _;
            unsafe { write_pktinfo(&mut msg, dst) };
            assert!(msg.msg_controllen > 0);
            // The sender's IPv4 message carries the address in `ipi_spec_dst`; the kernel
            // fills `ipi_addr` on receive. Read the sent form back through the same path.
            let read = unsafe { read_pktinfo(&msg) };
            match dst {
                Destination::V4(_) => assert_eq!(read, Destination::V4(Ipv4Addr::UNSPECIFIED)),
                _ => assert_eq!(read, dst),
            }
        }
    }
}
