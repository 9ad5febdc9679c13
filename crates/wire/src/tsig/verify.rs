//! Verification of received TSIG records (RFC 8945 §5.2 for requests, §5.3 / §5.4 for
//! responses and sequences), on the received bytes without copying them.

use crate::error::{Error, Result};
use crate::message::HEADER_LEN;
use crate::name::NameBuf;
use crate::tsig::hmac;
use crate::tsig::sign::{chained_context, digest_mac, digest_timers, digest_variables, TsigFields};
use crate::tsig::{constant_time_eq, Algorithm, Key, Keyring, Mac, TsigRecord};
use crate::types::Rcode;

/// Unsigned messages a sequence may hold between two signed ones (RFC 8945 §5.3.1).
pub const MAX_UNSIGNED_IN_SEQUENCE: u32 = 99;

/// The result of checking a TSIG (RFC 8945 §5.2), in the order the checks are made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TsigStatus {
    /// The MAC verified and the time is within the fudge.
    Ok,
    /// Unknown key, or an algorithm the key does not use or Tern does not implement.
    BadKey,
    /// The MAC does not verify.
    BadSig,
    /// The MAC verified but the signing time is outside the fudge.
    BadTime,
    /// The MAC verified but is shorter than the local policy accepts (§5.2.4).
    BadTrunc,
    /// (Responses) the MAC verified and the peer reports this TSIG error.
    Peer(Rcode),
}

/// What verification found, with what the response needs (§5.3.2).
#[derive(Debug, Clone)]
pub struct TsigOutcome<'k> {
    /// The verdict.
    pub status: TsigStatus,
    /// The key, when it was found.
    pub key: Option<&'k Key>,
    /// The MAC as received (possibly truncated): the request MAC of the response.
    pub mac: Mac,
    /// The key name as received.
    pub key_name: NameBuf,
    /// The algorithm name as received.
    pub algorithm: NameBuf,
    /// Time Signed as received.
    pub time_signed: u64,
    /// Fudge as received.
    pub fudge: u16,
}

/// Verifies the TSIG of a received message at time `now`. `request_mac` is `None` for a
/// request, and the MAC of the request we sent when checking a response. Returns `None`
/// for an unsigned message; malformed TSIG records and MAC sizes outside §5.2.2.1 are
/// errors (FORMERR). The time is checked against the message's own fudge: a server
/// checks requests with [`verify_request`].
pub fn verify_message<'k, K: Keyring + ?Sized>(
    msg: &[u8],
    keys: &'k K,
    request_mac: Option<&[u8]>,
    now: u64,
) -> Result<Option<TsigOutcome<'k>>> {
    verify_within(msg, keys, request_mac, now, u16::MAX)
}

/// Verifies the TSIG of a received request, as [`verify_message`] does, but allows its
/// Time Signed to be at most `max_fudge` seconds from `now` whatever fudge it names
/// (RFC 8945 §5.2.3: BADTIME outside the fudge): the client picks the fudge, and one of
/// 65,535 s would let a captured request be replayed for 18 hours. RFC 8945 §10
/// recommends 300 s ([`DEFAULT_FUDGE`](super::DEFAULT_FUDGE)).
pub fn verify_request<'k, K: Keyring + ?Sized>(
    msg: &[u8],
    keys: &'k K,
    now: u64,
    max_fudge: u16,
) -> Result<Option<TsigOutcome<'k>>> {
    verify_within(msg, keys, None, now, max_fudge)
}

/// [`verify_message`] with the fudge capped at `max_fudge`.
fn verify_within<'k, K: Keyring + ?Sized>(
    msg: &[u8],
    keys: &'k K,
    request_mac: Option<&[u8]>,
    now: u64,
    max_fudge: u16,
) -> Result<Option<TsigOutcome<'k>>> {
    let Some(tsig) = TsigRecord::find(msg)? else {
        return Ok(None);
    };
    let mut outcome = TsigOutcome {
        status: TsigStatus::BadKey,
        key: None,
        mac: Mac::from_slice(tsig.mac),
        key_name: tsig.key_name.clone(),
        algorithm: NameBuf::from_dname(tsig.algorithm),
        time_signed: tsig.time_signed,
        fudge: tsig.fudge,
    };
    // §5.2.1: key check.
    let algorithm = Algorithm::from_name(tsig.algorithm);
    let Some(key) = keys.find(&tsig.key_name).filter(|k| Some(k.algorithm()) == algorithm) else {
        return Ok(Some(outcome));
    };
    outcome.key = Some(key);
    // A response may carry an unsigned error (§5.3.2): nothing to verify.
    if request_mac.is_some() && tsig.mac.is_empty() && tsig.error != Rcode::NOERROR {
        outcome.status = TsigStatus::Peer(tsig.error);
        return Ok(Some(outcome));
    }
    check_mac_len(key, &tsig)?;
    // §5.2.2: MAC check.
    let mut ctx = key.context();
    if let Some(request_mac) = request_mac {
        digest_mac(&mut ctx, request_mac);
    }
    digest_received(&mut ctx, msg, &tsig)?;
    let fields = TsigFields {
        time_signed: tsig.time_signed,
        fudge: tsig.fudge,
        error: tsig.error,
        other: tsig.other,
    };
    digest_variables(&mut ctx, &tsig.key_name, tsig.algorithm, &fields);
    let window = tsig.fudge.min(max_fudge);
    outcome.status = checks_after_mac(ctx, key, &tsig, (now, window), request_mac.is_some());
    Ok(Some(outcome))
}

/// §5.2.2.1: the MAC may be truncated, but not below max(10, half) nor above full size.
fn check_mac_len(key: &Key, tsig: &TsigRecord<'_>) -> Result<()> {
    let len = tsig.mac.len();
    let algorithm = key.algorithm();
    if len > algorithm.mac_len() || len < algorithm.min_mac_len() {
        return Err(Error::BadTsig { offset: tsig.offset, reason: "MAC size out of range" });
    }
    Ok(())
}

/// The MAC comparison and then the time (§5.2.3: within `window` seconds of `now`),
/// truncation (§5.2.4) and peer-error checks.
fn checks_after_mac(
    ctx: hmac::Context,
    key: &Key,
    tsig: &TsigRecord<'_>,
    (now, window): (u64, u16),
    response: bool,
) -> TsigStatus {
    let computed = ctx.sign();
    let truncated = computed.as_ref().get(..tsig.mac.len()).unwrap_or(&[]);
    if !constant_time_eq(truncated, tsig.mac) {
        return TsigStatus::BadSig;
    }
    if now.abs_diff(tsig.time_signed) > u64::from(window) {
        return TsigStatus::BadTime;
    }
    if tsig.mac.len() < key.min_mac_len() {
        return TsigStatus::BadTrunc;
    }
    if response && tsig.error != Rcode::NOERROR {
        return TsigStatus::Peer(tsig.error);
    }
    TsigStatus::Ok
}

/// Digests the received message as it was before signing: original ID, ARCOUNT less
/// one, and nothing from the TSIG record on (RFC 8945 §4.3.1, §5.2).
fn digest_received(ctx: &mut hmac::Context, msg: &[u8], tsig: &TsigRecord<'_>) -> Result<()> {
    let bad = Error::BadTsig { offset: tsig.offset, reason: "message too short" };
    let middle = msg.get(2..10).ok_or(bad.clone())?;
    let arcount = msg.get(10..12).and_then(|b| b.try_into().ok()).map(u16::from_be_bytes);
    let arcount = arcount.and_then(|n| n.checked_sub(1)).ok_or(bad.clone())?;
    let body = msg.get(HEADER_LEN..tsig.offset).ok_or(bad)?;
    ctx.update(&tsig.original_id.to_be_bytes());
    ctx.update(middle);
    ctx.update(&arcount.to_be_bytes());
    ctx.update(body);
    Ok(())
}

/// What one message of a sequence brought.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SequenceStep {
    /// A signed message; the status of its check.
    Signed(TsigStatus),
    /// An unsigned message, digested into the next signed one.
    Unsigned,
}

/// Verifies the messages of a response sequence (zone transfers, RFC 8945 §5.3.1): the
/// first must be signed; up to 99 unsigned messages may sit between signed ones; each
/// signed message after the first covers the prior MAC, the messages since, and its
/// timers.
pub struct SequenceVerifier {
    key: Key,
    prior: Mac,
    first: bool,
    pending: Option<hmac::Context>,
    unsigned: u32,
}

impl std::fmt::Debug for SequenceVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SequenceVerifier")
            .field("key", &self.key)
            .field("prior", &self.prior)
            .field("first", &self.first)
            .field("unsigned", &self.unsigned)
            .finish()
    }
}

impl SequenceVerifier {
    /// Starts checking the answers to a request we signed with MAC `request_mac`.
    pub fn new(key: &Key, request_mac: &[u8]) -> SequenceVerifier {
        SequenceVerifier {
            key: key.clone(),
            prior: Mac::from_slice(request_mac),
            first: true,
            pending: None,
            unsigned: 0,
        }
    }

    /// Checks the next message at time `now`.
    pub fn verify(&mut self, msg: &[u8], now: u64) -> Result<SequenceStep> {
        self.verify_found(msg, TsigRecord::find(msg)?, now)
    }

    /// [`verify`](Self::verify) for a message the caller has read whole already (a
    /// transfer reads every record of it), with the TSIG record that reading found
    /// (`MessageReader::tsig_offset`, then [`TsigRecord::parse_at`]): the message is
    /// not walked a second time.
    pub fn verify_found(
        &mut self,
        msg: &[u8],
        tsig: Option<TsigRecord<'_>>,
        now: u64,
    ) -> Result<SequenceStep> {
        let Some(tsig) = tsig else {
            return self.unsigned(msg);
        };
        if self.first {
            let outcome = verify_message(msg, &self.key, Some(self.prior.as_slice()), now)?;
            let status = outcome.as_ref().map_or(TsigStatus::BadKey, |o| o.status);
            self.signed(&tsig, status);
            return Ok(SequenceStep::Signed(status));
        }
        if self.key.find(&tsig.key_name).is_none()
            || Algorithm::from_name(tsig.algorithm) != Some(self.key.algorithm())
        {
            return Ok(SequenceStep::Signed(TsigStatus::BadKey));
        }
        check_mac_len(&self.key, &tsig)?;
        let mut ctx = self.pending.take().unwrap_or_else(|| self.start());
        digest_received(&mut ctx, msg, &tsig)?;
        digest_timers(&mut ctx, tsig.time_signed, tsig.fudge);
        let status = checks_after_mac(ctx, &self.key, &tsig, (now, tsig.fudge), true);
        self.signed(&tsig, status);
        Ok(SequenceStep::Signed(status))
    }

    /// True when the last message checked was signed (and verified): a sequence must
    /// end with a signed message (RFC 8945 §5.3.1).
    pub fn last_was_signed(&self) -> bool {
        !self.first && self.pending.is_none()
    }

    fn unsigned(&mut self, msg: &[u8]) -> Result<SequenceStep> {
        if self.first || self.unsigned >= MAX_UNSIGNED_IN_SEQUENCE {
            let reason = if self.first {
                "first message of a sequence is not signed"
            } else {
                "more than 99 unsigned messages in a sequence"
            };
            return Err(Error::BadTsig { offset: msg.len(), reason });
        }
        let mut ctx = self.pending.take().unwrap_or_else(|| self.start());
        ctx.update(msg);
        self.pending = Some(ctx);
        self.unsigned += 1;
        Ok(SequenceStep::Unsigned)
    }

    fn start(&self) -> hmac::Context {
        chained_context(&self.key, &self.prior)
    }

    fn signed(&mut self, tsig: &TsigRecord<'_>, status: TsigStatus) {
        if status == TsigStatus::Ok {
            self.prior = Mac::from_slice(tsig.mac);
            self.first = false;
            self.unsigned = 0;
        }
    }
}
