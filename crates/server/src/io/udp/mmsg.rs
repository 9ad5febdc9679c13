//! Batched datagram I/O: one `recvmmsg` fills up to [`BATCH`] query buffers, one
//! `sendmmsg` sends the answers.
//!
//! All buffers (payloads, addresses, control messages, `iovec`s and `mmsghdr`s) are
//! allocated once per worker and reused; the headers point into the other buffers, which
//! never move (their `Vec`s are never resized). An answer is sent to the address its
//! query came from, by pointing the send header at the stored source address, and from
//! the address the query was sent to (packet info, see [`super::addr`]).

use std::io;
use std::mem::{size_of, zeroed};
use std::os::fd::RawFd;

use super::addr::{self, ControlBuf, Destination, CONTROL_SIZE};

/// Datagrams per `recvmmsg` / `sendmmsg` call.
pub const BATCH: usize = 32;
/// Bytes per query buffer: the largest UDP payload, so no query is ever cut short.
pub const QUERY_SIZE: usize = 65535;

/// One worker's reusable batch of datagrams.
pub struct Batch {
    queries: Vec<u8>,
    answers: Vec<u8>,
    answer_size: usize,
    sources: Vec<libc::sockaddr_storage>,
    recv_control: Vec<ControlBuf>,
    send_control: Vec<ControlBuf>,
    recv_iov: Vec<libc::iovec>,
    send_iov: Vec<libc::iovec>,
    recv_hdrs: Vec<libc::mmsghdr>,
    send_hdrs: Vec<libc::mmsghdr>,
    received: usize,
    queued: usize,
    /// Receive headers the kernel may have written since they were last made ready.
    touched: usize,
}

impl std::fmt::Debug for Batch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Batch")
            .field("received", &self.received)
            .field("queued", &self.queued)
            .finish()
    }
}

impl Batch {
    /// Allocates the buffers; each answer buffer holds `answer_size` bytes.
    pub fn new(answer_size: usize) -> Batch {
        // SAFETY: all-zero is a valid value of these plain C structs.
        let (storage, iov, hdr) = unsafe {
            (zeroed::<libc::sockaddr_storage>(), zeroed::<libc::iovec>(), zeroed::<libc::mmsghdr>())
        };
        let mut batch = Batch {
            queries: vec![0; BATCH * QUERY_SIZE],
            answers: vec![0; BATCH * answer_size],
            answer_size,
            sources: vec![storage; BATCH],
            recv_control: vec![ControlBuf([0; CONTROL_SIZE]); BATCH],
            send_control: vec![ControlBuf([0; CONTROL_SIZE]); BATCH],
            recv_iov: vec![iov; BATCH],
            send_iov: vec![iov; BATCH],
            recv_hdrs: vec![hdr; BATCH],
            send_hdrs: vec![hdr; BATCH],
            received: 0,
            queued: 0,
            touched: BATCH,
        };
        batch.link_receive_headers();
        batch
    }

    /// Points each receive header at its query buffer, source slot and control buffer.
    fn link_receive_headers(&mut self) {
        let queries = self.queries.as_mut_ptr();
        for (i, (iov, hdr)) in self.recv_iov.iter_mut().zip(&mut self.recv_hdrs).enumerate() {
            // `i * QUERY_SIZE` stays inside `queries` (BATCH * QUERY_SIZE bytes).
            iov.iov_base = queries.wrapping_add(i * QUERY_SIZE).cast();
            iov.iov_len = QUERY_SIZE;
            hdr.msg_hdr.msg_iov = iov;
            hdr.msg_hdr.msg_iovlen = 1;
        }
        for ((hdr, source), control) in
            self.recv_hdrs.iter_mut().zip(&mut self.sources).zip(&mut self.recv_control)
        {
            hdr.msg_hdr.msg_name = (source as *mut libc::sockaddr_storage).cast();
            hdr.msg_hdr.msg_control = control.0.as_mut_ptr().cast();
        }
    }

    /// Receives up to [`BATCH`] datagrams: blocks for the first (until the socket's
    /// receive timeout) unless `flags` has `MSG_DONTWAIT`, then takes what is queued.
    pub fn receive(&mut self, fd: RawFd, flags: i32) -> io::Result<usize> {
        // Only the headers the last call filled (and the one after, which a failing
        // call may have started on) were written by the kernel; the rest still hold
        // their lengths. Small batches are the common case under load.
        self.received = 0;
        self.queued = 0;
        for hdr in self.recv_hdrs.iter_mut().take(self.touched) {
            hdr.msg_hdr.msg_namelen = size_of::<libc::sockaddr_storage>() as libc::socklen_t;
            hdr.msg_hdr.msg_controllen = CONTROL_SIZE as _;
            hdr.msg_hdr.msg_flags = 0;
            hdr.msg_len = 0;
        }
        // SAFETY: `recv_hdrs` holds BATCH headers whose pointers reference buffers owned
        // by `self` with the lengths set above; the kernel writes only within them.
        let n = unsafe {
            libc::recvmmsg(
                fd,
                self.recv_hdrs.as_mut_ptr(),
                BATCH as u32,
                flags | libc::MSG_WAITFORONE,
                std::ptr::null_mut(),
            )
        };
        let n = usize::try_from(n);
        self.touched = n.as_ref().map_or(1, |&n| (n + 1).min(BATCH));
        let n = n.map_err(|_| io::Error::last_os_error())?;
        self.received = n.min(BATCH);
        Ok(self.received)
    }

    /// Datagrams received by the last [`receive`](Batch::receive).
    pub fn received(&self) -> usize {
        self.received
    }

    /// The source and destination of datagram `i`; `None` for a datagram to skip (cut
    /// short, or from an address family this socket does not speak).
    pub fn addresses(&self, i: usize) -> Option<(std::net::SocketAddr, Destination)> {
        let hdr = &self.recv_hdrs.get(i)?.msg_hdr;
        if hdr.msg_flags & libc::MSG_TRUNC != 0 {
            return None;
        }
        let source = addr::from_raw(self.sources.get(i)?, hdr.msg_namelen)?;
        // SAFETY: after `recvmmsg`, `msg_control`/`msg_controllen` describe the part of
        // `recv_control[i]` that the kernel wrote.
        let destination = unsafe { addr::read_pktinfo(hdr) };
        Some((source, destination))
    }

    /// The query received in slot `i`.
    pub fn query(&self, i: usize) -> Option<&[u8]> {
        let len = usize::try_from(self.recv_hdrs.get(i)?.msg_len).ok()?;
        let start = i.checked_mul(QUERY_SIZE)?;
        self.queries.get(start..start.checked_add(len.min(QUERY_SIZE))?)
    }

    /// The query bytes of datagram `i` and the answer buffer of the same slot.
    pub fn slot(&mut self, i: usize) -> Option<(&[u8], &mut [u8])> {
        let len = usize::try_from(self.recv_hdrs.get(i)?.msg_len).ok()?;
        let start = i.checked_mul(QUERY_SIZE)?;
        let query = self.queries.get(start..start.checked_add(len.min(QUERY_SIZE))?)?;
        let answer_start = i.checked_mul(self.answer_size)?;
        let answer = self.answers.get_mut(answer_start..answer_start + self.answer_size)?;
        Some((query, answer))
    }

    /// Queues the first `len` bytes of slot `i`'s answer buffer for sending back to the
    /// datagram's source, from `destination`.
    pub fn queue_answer(&mut self, i: usize, len: usize, destination: Destination) {
        let (Some(recv), Some(iov), Some(hdr), Some(control)) = (
            self.recv_hdrs.get(i),
            self.send_iov.get_mut(self.queued),
            self.send_hdrs.get_mut(self.queued),
            self.send_control.get_mut(self.queued),
        ) else {
            return;
        };
        iov.iov_base = self.answers.as_mut_ptr().wrapping_add(i * self.answer_size).cast();
        iov.iov_len = len.min(self.answer_size);
        hdr.msg_hdr.msg_iov = iov;
        hdr.msg_hdr.msg_iovlen = 1;
        hdr.msg_hdr.msg_name = recv.msg_hdr.msg_name;
        hdr.msg_hdr.msg_namelen = recv.msg_hdr.msg_namelen;
        hdr.msg_hdr.msg_control = control.0.as_mut_ptr().cast();
        hdr.msg_hdr.msg_controllen = CONTROL_SIZE as _;
        // SAFETY: the control pointer and length were just set to `control`, an aligned
        // buffer of CONTROL_SIZE bytes owned by `self`.
        unsafe { addr::write_pktinfo(&mut hdr.msg_hdr, destination) };
        self.queued += 1;
    }

    /// Sends the queued answers; returns how many the kernel took. A datagram the kernel
    /// refuses (say, no route to its client) is skipped, not retried.
    pub fn send(&mut self, fd: RawFd) -> usize {
        let queued = self.send_hdrs.get_mut(..self.queued).unwrap_or_default();
        // SAFETY: the queued headers were filled by `queue_answer` and point into
        // buffers owned by `self`, alive and unchanged during the call.
        let sent = unsafe { send_headers(fd, queued) };
        self.queued = 0;
        sent
    }
}

/// `sendmmsg` of every header in `hdrs`, until all are sent; one the kernel refuses is
/// skipped, not retried. Returns how many the kernel took.
///
/// # Safety
/// Each header's name, iovec (and what it points at) and control buffer must be valid
/// for reading, and stay unchanged, for the call.
pub unsafe fn send_headers(fd: RawFd, hdrs: &mut [libc::mmsghdr]) -> usize {
    // SAFETY: as this function's.
    unsafe { send_headers_then(fd, hdrs, |_, _| {}) }
}

/// [`send_headers`], calling `refused` with the index of each header the kernel
/// refused, and why, before the headers after it are sent.
///
/// # Safety
/// As [`send_headers`].
pub unsafe fn send_headers_then(
    fd: RawFd,
    hdrs: &mut [libc::mmsghdr],
    mut refused: impl FnMut(usize, io::Error),
) -> usize {
    let (mut start, mut sent) = (0, 0);
    while let Some(rest) = hdrs.get_mut(start..).filter(|rest| !rest.is_empty()) {
        // SAFETY: the caller vouches for the headers.
        let n = unsafe { libc::sendmmsg(fd, rest.as_mut_ptr(), rest.len() as u32, 0) };
        match usize::try_from(n) {
            Ok(n) if n > 0 => {
                start += n;
                sent += n;
            }
            _ => {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    refused(start, e);
                    start += 1;
                }
            }
        }
    }
    sent
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::UdpSocket;
    use std::os::fd::AsRawFd;

    #[test]
    fn receives_a_batch_and_answers_each_source() {
        let server = UdpSocket::bind("127.0.0.1:0").unwrap();
        let server_addr = server.local_addr().unwrap();
        let clients: Vec<UdpSocket> =
            (0..3).map(|_| UdpSocket::bind("127.0.0.1:0").unwrap()).collect();
        for (n, client) in clients.iter().enumerate() {
            client.send_to(&[n as u8; 5], server_addr).unwrap();
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
        let mut batch = Batch::new(512);
        let got = batch.receive(server.as_raw_fd(), libc::MSG_DONTWAIT).unwrap();
        assert_eq!(got, 3);
        for i in 0..got {
            let (source, destination) = batch.addresses(i).unwrap();
            assert_eq!(destination, Destination::Unknown);
            let (query, answer) = batch.slot(i).unwrap();
            assert_eq!(query.len(), 5);
            answer[..2].copy_from_slice(&[query[0], 0xAA]);
            assert!(clients.iter().any(|c| c.local_addr().unwrap() == source));
            batch.queue_answer(i, 2, destination);
        }
        assert_eq!(batch.send(server.as_raw_fd()), 3);
        for (n, client) in clients.iter().enumerate() {
            let mut buf = [0u8; 16];
            let (len, from) = client.recv_from(&mut buf).unwrap();
            assert_eq!((&buf[..len], from), (&[n as u8, 0xAA][..], server_addr));
        }
    }

    /// Batches of varying size on one `Batch`: each datagram's source and length are
    /// read right, whatever the earlier batches left in the headers.
    #[test]
    fn batches_of_varying_size_reuse_the_headers() {
        let server = UdpSocket::bind("127.0.0.1:0").unwrap();
        let server_addr = server.local_addr().unwrap();
        let clients: Vec<UdpSocket> =
            (0..3).map(|_| UdpSocket::bind("127.0.0.1:0").unwrap()).collect();
        let mut batch = Batch::new(512);
        for (round, count) in [3usize, 1, 2, 0, 3].into_iter().enumerate() {
            for (n, client) in clients.iter().take(count).enumerate() {
                client.send_to(&vec![n as u8; 5 + round + n], server_addr).unwrap();
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
            let got = batch.receive(server.as_raw_fd(), libc::MSG_DONTWAIT).unwrap_or(0);
            assert_eq!(got, count, "round {round}");
            for i in 0..got {
                let (source, _) = batch.addresses(i).unwrap();
                let query = batch.query(i).unwrap();
                let n = usize::from(query[0]);
                assert_eq!(source, clients[n].local_addr().unwrap(), "round {round}");
                assert_eq!(query.len(), 5 + round + n, "round {round}");
            }
        }
    }

    #[test]
    fn empty_socket_would_block() {
        let server = UdpSocket::bind("127.0.0.1:0").unwrap();
        let mut batch = Batch::new(512);
        let err = batch.receive(server.as_raw_fd(), libc::MSG_DONTWAIT).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::WouldBlock);
        assert_eq!(batch.send(server.as_raw_fd()), 0);
    }
}
