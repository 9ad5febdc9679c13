//! DNS cookies (RFC 7873) with interoperable server cookies (RFC 9018).
//!
//! The server's secrets follow a [`Schedule`]: fixed secrets (the first makes cookies, all
//! are accepted; servers of other makes given the same secret accept Tern's cookies and
//! Tern theirs), or a secret per period derived from a master, the previous period's
//! still accepted, so that servers sharing the master rotate in step. [`Cookies`] is one
//! worker's copy: it works out the period's secrets when a query first carries a cookie
//! in that period, and keeps them.
//!
//! A query's COOKIE option is checked once, before it is answered (`check`); every
//! response to it, whatever its RCODE, carries the client cookie and a server cookie: the
//! one received when it is ours under the current secret and less than half an hour old
//! (RFC 9018 §4.3), a new one otherwise. A malformed option is FORMERR (RFC 7873 §5.2.2).
//! A query with only a client cookie, or with a server cookie that is not valid, is
//! answered normally (RFC 7873 §5.2.3–§5.2.4, as BIND does); the server asks for a
//! cookie (BADCOOKIE) only where its rate limiting says so ([`crate::Short::BadCookie`]).

use std::cell::Cell;
use std::net::IpAddr;

use tern_wire::edns::cookie::{CLIENT_COOKIE_LEN, SERVER_COOKIE_LEN};
use tern_wire::edns::{Cookie, CookieStatus, ServerSecret};

/// Most secrets accepted at once: the current one and three before it.
pub const MAX_SECRETS: usize = 4;

/// Where the server secrets come from.
#[derive(Clone)]
pub enum Schedule {
    /// Cookies are made with `current`; cookies made with it or with one of `previous`
    /// (at most [`MAX_SECRETS`] − 1 are used) are accepted.
    Fixed {
        /// The secret cookies are made with.
        current: [u8; 16],
        /// Secrets still accepted.
        previous: Vec<[u8; 16]>,
    },
    /// Period `n` (`n = now / period`, seconds since the epoch) has the secret
    /// [`ServerSecret::derive`]`(master, n)`; cookies of periods `n` and `n − 1` are
    /// accepted. A period of an hour or more keeps every cookie younger than its
    /// lifetime (an hour, RFC 9018 §4.3) acceptable.
    Rotating {
        /// The master the secrets are derived from.
        master: [u8; 16],
        /// Seconds each secret makes cookies (at least 1).
        period: u64,
    },
}

impl std::fmt::Debug for Schedule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Schedule::Fixed { previous, .. } => write!(f, "Fixed(1 + {} accepted)", previous.len()),
            Schedule::Rotating { period, .. } => write!(f, "Rotating(every {period} s)"),
        }
    }
}

/// The secrets of one period: `secrets[0]` makes cookies, the first `count` are accepted.
#[derive(Clone, Copy)]
struct Period {
    number: u64,
    secrets: [ServerSecret; MAX_SECRETS],
    count: usize,
}

/// One worker's cookie secrets: the [`Schedule`] and the secrets of the period last
/// seen. Not shared between threads (the period's secrets are kept in a `Cell`); every
/// worker makes its own from the same schedule, and they agree.
pub struct Cookies {
    schedule: Schedule,
    period: Cell<Option<Period>>,
}

impl std::fmt::Debug for Cookies {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Cookies({:?})", self.schedule)
    }
}

impl Cookies {
    /// A worker's copy of `schedule`.
    pub fn new(schedule: Schedule) -> Cookies {
        Cookies { schedule, period: Cell::new(None) }
    }

    /// The secrets in force at `now` (seconds since the epoch), worked out once per
    /// period.
    fn secrets(&self, now: u64) -> Period {
        let number = match &self.schedule {
            Schedule::Fixed { .. } => 0,
            Schedule::Rotating { period, .. } => now / (*period).max(1),
        };
        if let Some(known) = self.period.get().filter(|p| p.number == number) {
            return known;
        }
        let period = self.work_out(number);
        self.period.set(Some(period));
        period
    }

    fn work_out(&self, number: u64) -> Period {
        let mut secrets = [ServerSecret::new([0; 16]); MAX_SECRETS];
        let mut count = 0;
        let mut put = |secret: ServerSecret| {
            if let Some(slot) = secrets.get_mut(count) {
                *slot = secret;
                count += 1;
            }
        };
        match &self.schedule {
            Schedule::Fixed { current, previous } => {
                put(ServerSecret::new(*current));
                previous.iter().for_each(|key| put(ServerSecret::new(*key)));
            }
            Schedule::Rotating { master, .. } => {
                put(ServerSecret::derive(master, number));
                put(ServerSecret::derive(master, number.wrapping_sub(1)));
            }
        }
        Period { number, secrets, count }
    }
}

/// A query's COOKIE option (the first one, RFC 7873 §5.2), as far as it was looked at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum QueryCookie<'a> {
    /// No COOKIE option.
    Absent,
    /// The option's data, not checked (yet, or at all when cookies are off: the option is
    /// then ignored, as by a server that does not know it).
    Unchecked(&'a [u8]),
    /// Not 8 or 16 to 40 bytes long: FORMERR (RFC 7873 §5.2.2).
    Malformed,
    /// Checked: what the response carries.
    Checked(Reply),
}

/// The COOKIE option of a response, and whether the query's server cookie was valid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Reply {
    pub client: [u8; CLIENT_COOKIE_LEN],
    pub server: [u8; SERVER_COOKIE_LEN],
    pub valid: bool,
}

/// What the server's defences are told about a query's cookie.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CookieSeen {
    /// No cookie, or cookies are off.
    None,
    /// A client cookie without a valid server cookie (none, not ours, or expired).
    Client,
    /// A valid server cookie: the client has been answered at its address before.
    Valid,
}

impl QueryCookie<'_> {
    /// What the server's defences are told.
    pub(crate) fn seen(&self) -> CookieSeen {
        match self {
            QueryCookie::Checked(Reply { valid: true, .. }) => CookieSeen::Valid,
            QueryCookie::Checked(_) => CookieSeen::Client,
            _ => CookieSeen::None,
        }
    }

    /// The response's COOKIE option, when it has one.
    pub(crate) fn reply(&self) -> Option<&Reply> {
        match self {
            QueryCookie::Checked(reply) => Some(reply),
            _ => None,
        }
    }
}

/// Bytes a response's COOKIE option takes: the option header, the client cookie and an
/// RFC 9018 server cookie.
pub(crate) const OPTION_LEN: usize = 4 + CLIENT_COOKIE_LEN + SERVER_COOKIE_LEN;

/// Checks the COOKIE option `data` of a query from `client` (RFC 7873 §5.2, RFC 9018
/// §4.3) and says what the response carries. The clock is read here, so only for
/// queries with a cookie.
pub(crate) fn check<'a>(
    data: &[u8],
    cookies: &Cookies,
    client: IpAddr,
    clock: fn() -> u64,
) -> QueryCookie<'a> {
    let Ok(cookie) = Cookie::parse(data) else { return QueryCookie::Malformed };
    // An IPv4 client on a dual-stack socket is hashed as IPv4, as it would be on an
    // IPv4 socket.
    let client = client.to_canonical();
    let now = clock();
    let period = cookies.secrets(now);
    // RFC 9018 §4.3: timestamps are seconds modulo 2^32, compared with serial arithmetic.
    let stamp = now as u32;
    let [current, older @ ..] = &period.secrets;
    let mut valid = false;
    if !cookie.server.is_empty() {
        match current.check(&cookie, client, stamp) {
            CookieStatus::Valid => {
                if let Ok(server) = cookie.server.try_into() {
                    return QueryCookie::Checked(Reply {
                        client: cookie.client,
                        server,
                        valid: true,
                    });
                }
            }
            CookieStatus::ValidRenew => valid = true,
            CookieStatus::Invalid => {
                let accepted = older.iter().take(period.count.saturating_sub(1));
                valid = accepted
                    .map(|secret| secret.check(&cookie, client, stamp))
                    .any(|status| status != CookieStatus::Invalid);
            }
        }
    }
    let server = current.make(&cookie.client, client, stamp);
    QueryCookie::Checked(Reply { client: cookie.client, server, valid })
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLIENT: [u8; 8] = [0x24, 0x64, 0xc4, 0xab, 0xcf, 0x10, 0xc9, 0x57];

    fn ip() -> IpAddr {
        "198.51.100.100".parse().unwrap()
    }

    fn fixed(current: u8, previous: &[u8]) -> Cookies {
        let previous = previous.iter().map(|&b| [b; 16]).collect();
        Cookies::new(Schedule::Fixed { current: [current; 16], previous })
    }

    fn with_server(server: &[u8]) -> Vec<u8> {
        let mut data = CLIENT.to_vec();
        data.extend_from_slice(server);
        data
    }

    fn reply(result: QueryCookie<'_>) -> Reply {
        match result {
            QueryCookie::Checked(reply) => reply,
            other => panic!("not checked: {other:?}"),
        }
    }

    #[test]
    fn a_client_cookie_gets_a_server_cookie_of_the_current_secret() {
        let cookies = fixed(1, &[]);
        let got = reply(check(&CLIENT, &cookies, ip(), || 1_559_731_985));
        assert!(!got.valid);
        assert_eq!(got.client, CLIENT);
        assert_eq!(got.server, ServerSecret::new([1; 16]).make(&CLIENT, ip(), 1_559_731_985));
    }

    #[test]
    fn a_fresh_valid_cookie_is_echoed_and_an_old_one_renewed() {
        let cookies = fixed(1, &[]);
        let made = ServerSecret::new([1; 16]).make(&CLIENT, ip(), 1000);
        let fresh = reply(check(&with_server(&made), &cookies, ip(), || 1100));
        assert_eq!((fresh.valid, fresh.server), (true, made));
        let renewed = reply(check(&with_server(&made), &cookies, ip(), || 1000 + 1800));
        assert!(renewed.valid);
        assert_eq!(renewed.server, ServerSecret::new([1; 16]).make(&CLIENT, ip(), 2800));
        let expired = reply(check(&with_server(&made), &cookies, ip(), || 1000 + 3601));
        assert!(!expired.valid, "older than an hour");
        let other_ip =
            reply(check(&with_server(&made), &cookies, "198.51.100.101".parse().unwrap(), || 1100));
        assert!(!other_ip.valid, "made for another address");
    }

    #[test]
    fn previous_secrets_are_accepted_and_replaced() {
        let cookies = fixed(2, &[1]);
        let old = ServerSecret::new([1; 16]).make(&CLIENT, ip(), 1000);
        let got = reply(check(&with_server(&old), &cookies, ip(), || 1100));
        assert!(got.valid);
        assert_eq!(got.server, ServerSecret::new([2; 16]).make(&CLIENT, ip(), 1100));
        let unknown = ServerSecret::new([3; 16]).make(&CLIENT, ip(), 1000);
        assert!(!reply(check(&with_server(&unknown), &cookies, ip(), || 1100)).valid);
    }

    #[test]
    fn rotation_accepts_the_previous_period_only() {
        let master = [9u8; 16];
        let cookies = Cookies::new(Schedule::Rotating { master, period: 3600 });
        let at = |t: u64| ServerSecret::derive(&master, t / 3600).make(&CLIENT, ip(), t as u32);
        let made = at(3600 * 10 + 3500); // period 10, 100 s before its end
        let next = reply(check(&with_server(&made), &cookies, ip(), || 3600 * 11 + 100));
        assert!(next.valid, "made in the previous period, 200 s old");
        assert_eq!(next.server, at(3600 * 11 + 100), "renewed with the current secret");
        let same = reply(check(&with_server(&made), &cookies, ip(), || 3600 * 10 + 3550));
        assert_eq!((same.valid, same.server), (true, made), "fresh and current: echoed");
        let two_back = at(3600 * 9 + 3599);
        let late = reply(check(&with_server(&two_back), &cookies, ip(), || 3600 * 11 + 10));
        assert!(!late.valid, "two periods back: expired anyway");
    }

    #[test]
    fn lengths_and_v4_mapped_addresses() {
        let cookies = fixed(1, &[]);
        for bad in [&CLIENT[..5], &with_server(&[0; 4]), &with_server(&[0; 33])] {
            assert_eq!(check(bad, &cookies, ip(), || 0), QueryCookie::Malformed);
        }
        let short = reply(check(&with_server(&[0x11; 8]), &cookies, ip(), || 5));
        assert!(!short.valid, "an 8-byte server cookie is not ours");
        let mapped: IpAddr = "::ffff:198.51.100.100".parse().unwrap();
        let made = ServerSecret::new([1; 16]).make(&CLIENT, ip(), 1000);
        assert!(reply(check(&with_server(&made), &cookies, mapped, || 1000)).valid);
    }
}
