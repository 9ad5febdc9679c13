//! Socket options that `socket2` does not offer, set through `setsockopt` directly, and
//! the HTTP server's TCP listener.

use std::os::fd::AsRawFd;

use socket2::Socket;

/// `setsockopt` with an `int` value.
pub fn set_int(socket: &Socket, level: i32, name: i32, value: i32) -> std::io::Result<()> {
    let len = std::mem::size_of::<i32>() as libc::socklen_t;
    // SAFETY: the fd is open for the lifetime of `socket`; the value pointer and length
    // describe one readable `int`.
    let rc = unsafe {
        libc::setsockopt(socket.as_raw_fd(), level, name, (&value as *const i32).cast(), len)
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// `getsockopt` of an `int` value.
pub fn get_int(socket: &impl AsRawFd, level: i32, name: i32) -> std::io::Result<i32> {
    let mut value: i32 = 0;
    let mut len = std::mem::size_of::<i32>() as libc::socklen_t;
    // SAFETY: the fd is open for the lifetime of `socket`; the value pointer and length
    // describe one writable `int`, and the kernel writes at most `len` bytes.
    let rc = unsafe {
        libc::getsockopt(socket.as_raw_fd(), level, name, (&mut value as *mut i32).cast(), &mut len)
    };
    if rc == 0 {
        Ok(value)
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// A TCP listener on `addr` (the HTTP server's) (`SO_REUSEADDR`, IPv6-only on IPv6 addresses,
/// non-blocking).
pub fn tcp_listener(addr: std::net::SocketAddr) -> crate::error::Result<std::net::TcpListener> {
    let fail = |source| crate::error::Error::Bind { addr, source };
    let socket = socket2::Socket::new(
        socket2::Domain::for_address(addr),
        socket2::Type::STREAM,
        Some(socket2::Protocol::TCP),
    )
    .map_err(fail)?;
    socket.set_reuse_address(true).map_err(fail)?;
    if addr.is_ipv6() {
        socket.set_only_v6(true).map_err(fail)?;
    }
    socket.bind(&addr.into()).map_err(fail)?;
    socket.listen(128).map_err(fail)?;
    socket.set_nonblocking(true).map_err(fail)?;
    Ok(socket.into())
}

#[cfg(test)]
mod tests {
    use socket2::{Domain, Type};

    use super::*;

    #[test]
    fn an_int_option_reads_back() {
        let socket = Socket::new(Domain::IPV4, Type::STREAM, None).unwrap();
        set_int(&socket, libc::SOL_SOCKET, libc::SO_KEEPALIVE, 1).unwrap();
        assert_eq!(get_int(&socket, libc::SOL_SOCKET, libc::SO_KEEPALIVE).unwrap(), 1);
        assert!(set_int(&socket, libc::SOL_SOCKET, -1, 1).is_err(), "unknown option refused");
    }
}
