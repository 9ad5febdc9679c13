//! Random bytes from the kernel's generator (`getrandom(2)`): seeds, secrets, message
//! IDs and TSIG keys. Not aws-lc's generator: its first use at start-up seeds itself with
//! jitter entropy, which took about 350M instructions (tens of milliseconds) of every
//! start, and the kernel's generator is the one it would read from anyway.

use std::io;

/// Fills `buf` with random bytes; an error when the kernel cannot give them.
pub fn fill(buf: &mut [u8]) -> io::Result<()> {
    let mut rest = buf;
    while !rest.is_empty() {
        // SAFETY: getrandom writes at most `rest.len()` bytes into `rest`, which we own.
        let got = unsafe { libc::getrandom(rest.as_mut_ptr().cast(), rest.len(), 0) };
        match usize::try_from(got) {
            Ok(n) => rest = std::mem::take(&mut rest).get_mut(n..).unwrap_or_default(),
            Err(_) => {
                let error = io::Error::last_os_error();
                if error.kind() != io::ErrorKind::Interrupted {
                    return Err(error);
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_are_filled_and_differ_between_calls() {
        let (mut a, mut b) = ([0u8; 64], [0u8; 64]);
        fill(&mut a).unwrap();
        fill(&mut b).unwrap();
        assert_ne!(a, [0u8; 64]);
        assert_ne!(a, b);
    }

    #[test]
    fn an_empty_buffer_is_no_error() {
        fill(&mut []).unwrap();
    }
}
