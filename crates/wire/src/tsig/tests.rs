//! TSIG sign/verify tests (interoperability with dnspython is in `tests/tsig_interop.rs`).

use super::*;
use crate::message::{CompressionTable, MessageReader, MessageWriter, Section};
use crate::types::{Rcode, Rtype};

const NOW: u64 = 1_700_000_000;

fn key(alg: Algorithm) -> Key {
    Key::new("tsig-key.example.".parse().unwrap(), alg, b"0123456789abcdef0123456789abcdef")
}

/// Builds a query (or a response with `id`) signed with `key`; returns bytes and MAC.
fn signed(key: &Key, id: u16, request_mac: Option<&[u8]>, time: u64) -> (Vec<u8>, Mac) {
    let mut buf = [0u8; 1024];
    let mut table = CompressionTable::new();
    let mut w = MessageWriter::new(&mut buf, 1024, &mut table).unwrap();
    w.set_id(id);
    let qname: Name = "www.example.".parse().unwrap();
    w.push_question(&qname, Rtype::A, crate::types::Class::IN).unwrap();
    if request_mac.is_some() {
        w.push_record(
            Section::Answer,
            &qname,
            Rtype::A,
            crate::types::Class::IN,
            60,
            &[192, 0, 2, 1],
        )
        .unwrap();
    }
    let mac = w.sign_tsig(key, request_mac, &TsigFields::at(time)).unwrap();
    (w.finish().to_vec(), mac)
}

#[test]
fn sign_then_verify_every_algorithm() {
    for alg in Algorithm::ALL {
        let k = key(alg);
        let (query, mac) = signed(&k, 7, None, NOW);
        assert_eq!(mac.as_slice().len(), alg.mac_len());
        let tsig = TsigRecord::find(&query).unwrap().unwrap();
        assert_eq!(tsig.algorithm, alg.name());
        assert_eq!((tsig.time_signed, tsig.fudge, tsig.original_id), (NOW, 300, 7));
        let outcome = verify_message(&query, &k, None, NOW + 10).unwrap().unwrap();
        assert_eq!(outcome.status, TsigStatus::Ok, "{alg}");
        assert_eq!(outcome.mac, mac);
        // The response covers the request MAC.
        let (response, _) = signed(&k, 7, Some(mac.as_slice()), NOW + 1);
        let checked = verify_message(&response, &k, Some(mac.as_slice()), NOW).unwrap().unwrap();
        assert_eq!(checked.status, TsigStatus::Ok);
        let wrong = verify_message(&response, &k, Some(&[0; 32]), NOW).unwrap().unwrap();
        assert_eq!(wrong.status, TsigStatus::BadSig);
    }
}

#[test]
fn failures_are_values() {
    let k = key(Algorithm::HmacSha256);
    let (query, _) = signed(&k, 7, None, NOW);
    // Any flipped bit before the TSIG record: BADSIG.
    let tsig_at = TsigRecord::find(&query).unwrap().unwrap().offset;
    for i in (2..tsig_at).step_by(3) {
        let mut tampered = query.clone();
        tampered[i] ^= 0x20;
        if let Ok(Some(outcome)) = verify_message(&tampered, &k, None, NOW) {
            assert_eq!(outcome.status, TsigStatus::BadSig, "byte {i}");
        }
    }
    // The ID may change (forwarders): the original ID is digested instead.
    let mut renumbered = query.clone();
    renumbered[0] = 0xff;
    let outcome = verify_message(&renumbered, &k, None, NOW).unwrap().unwrap();
    assert_eq!(outcome.status, TsigStatus::Ok);
    // Unknown key name, or a known name with another algorithm: BADKEY.
    let other = Key::new("other.".parse().unwrap(), Algorithm::HmacSha256, b"x");
    assert_eq!(
        verify_message(&query, &other, None, NOW).unwrap().unwrap().status,
        TsigStatus::BadKey
    );
    let same_name = key(Algorithm::HmacSha512);
    let outcome = verify_message(&query, &same_name, None, NOW).unwrap().unwrap();
    assert_eq!((outcome.status, outcome.key.is_none()), (TsigStatus::BadKey, true));
    // Wrong secret: BADSIG. Outside the fudge either way: BADTIME.
    let wrong = Key::new("tsig-key.example.".parse().unwrap(), Algorithm::HmacSha256, b"y");
    assert_eq!(
        verify_message(&query, &wrong, None, NOW).unwrap().unwrap().status,
        TsigStatus::BadSig
    );
    assert_eq!(
        verify_message(&query, &k, None, NOW + 300).unwrap().unwrap().status,
        TsigStatus::Ok
    );
    assert_eq!(
        verify_message(&query, &k, None, NOW + 301).unwrap().unwrap().status,
        TsigStatus::BadTime
    );
    assert_eq!(
        verify_message(&query, &k, None, NOW - 301).unwrap().unwrap().status,
        TsigStatus::BadTime
    );
    // A keyring of several keys finds the right one.
    let ring = [other, k.clone()];
    assert_eq!(
        verify_message(&query, &ring[..], None, NOW).unwrap().unwrap().status,
        TsigStatus::Ok
    );
    // Unsigned messages have no outcome.
    assert!(verify_message(&query[..tsig_at], &k, None, NOW).is_err()); // ARCOUNT says 1
}

/// Rewrites the MAC of a signed message to its first `len` bytes.
fn truncate_mac(msg: &[u8], len: usize) -> Vec<u8> {
    let tsig = TsigRecord::find(msg).unwrap().unwrap();
    let mac_at = tsig.mac.as_ptr() as usize - msg.as_ptr() as usize;
    let cut = tsig.mac.len() - len;
    let mut out = msg[..mac_at - 2].to_vec();
    out.extend_from_slice(&(len as u16).to_be_bytes());
    out.extend_from_slice(&msg[mac_at..mac_at + len]);
    out.extend_from_slice(&msg[mac_at + tsig.mac.len()..]);
    // Fix RDLENGTH (just before the algorithm name).
    let alg_at = tsig.algorithm.as_wire().as_ptr() as usize - msg.as_ptr() as usize;
    let rdlength = u16::from_be_bytes([out[alg_at - 2], out[alg_at - 1]]) - cut as u16;
    out[alg_at - 2..alg_at].copy_from_slice(&rdlength.to_be_bytes());
    out
}

#[test]
fn truncated_macs_rfc8945_5_2_2_1() {
    let k = key(Algorithm::HmacSha256);
    let (query, _) = signed(&k, 7, None, NOW);
    // 16 bytes = half of SHA-256: allowed, verified on the truncated value.
    let half = truncate_mac(&query, 16);
    assert_eq!(verify_message(&half, &k, None, NOW).unwrap().unwrap().status, TsigStatus::Ok);
    // Below half: FORMERR.
    let short = truncate_mac(&query, 15);
    assert!(matches!(verify_message(&short, &k, None, NOW), Err(Error::BadTsig { .. })));
    // Local policy wanting the full MAC: BADTRUNC after the MAC verified.
    let strict = k.clone().with_min_mac_len(32);
    assert_eq!(
        verify_message(&half, &strict, None, NOW).unwrap().unwrap().status,
        TsigStatus::BadTrunc
    );
    // SHA-1: the floor is 10 bytes (half would be 10 too).
    let k1 = key(Algorithm::HmacSha1);
    let (q1, _) = signed(&k1, 1, None, NOW);
    assert_eq!(
        verify_message(&truncate_mac(&q1, 10), &k1, None, NOW).unwrap().unwrap().status,
        TsigStatus::Ok
    );
    assert!(verify_message(&truncate_mac(&q1, 9), &k1, None, NOW).is_err());
    assert!(verify_message(&truncate_mac(&q1, 0), &k1, None, NOW).is_err());
}

fn respond(outcome: &TsigOutcome<'_>, now: u64) -> (Vec<u8>, Option<Mac>) {
    let mut buf = [0u8; 1024];
    let mut table = CompressionTable::new();
    let mut w = MessageWriter::new(&mut buf, 1024, &mut table).unwrap();
    w.set_id(7);
    w.set_rcode(if outcome.status == TsigStatus::Ok { Rcode::NOERROR } else { Rcode::NOTAUTH });
    let mac = w.push_tsig_response(outcome, now).unwrap();
    (w.finish().to_vec(), mac)
}

#[test]
fn error_responses_rfc8945_5_3_2() {
    let k = key(Algorithm::HmacSha256);
    let (query, qmac) = signed(&k, 7, None, NOW);
    // BADTIME: signed, request's Time Signed kept, server time in Other Data.
    let late = NOW + 1000;
    let outcome = verify_message(&query, &k, None, late).unwrap().unwrap();
    assert_eq!(outcome.status, TsigStatus::BadTime);
    let (resp, mac) = respond(&outcome, late);
    let tsig = TsigRecord::find(&resp).unwrap().unwrap();
    assert_eq!((tsig.error, tsig.time_signed), (Rcode::BADTIME, NOW));
    assert_eq!(tsig.other, &crate::tsig::sign::time_bytes(late));
    assert!(mac.is_some());
    let client = verify_message(&resp, &k, Some(qmac.as_slice()), NOW).unwrap().unwrap();
    assert_eq!(client.status, TsigStatus::Peer(Rcode::BADTIME));
    // BADSIG / BADKEY: unsigned, MAC size 0, key and algorithm echoed.
    let wrong = Key::new("tsig-key.example.".parse().unwrap(), Algorithm::HmacSha256, b"y");
    let outcome = verify_message(&query, &wrong, None, NOW).unwrap().unwrap();
    let (resp, mac) = respond(&outcome, NOW);
    assert!(mac.is_none());
    let tsig = TsigRecord::find(&resp).unwrap().unwrap();
    assert_eq!((tsig.error, tsig.mac.len()), (Rcode::BADSIG, 0));
    assert_eq!(tsig.key_name.to_string(), "tsig-key.example.");
    assert_eq!(tsig.algorithm, Algorithm::HmacSha256.name());
    let client = verify_message(&resp, &k, Some(qmac.as_slice()), NOW).unwrap().unwrap();
    assert_eq!(client.status, TsigStatus::Peer(Rcode::BADSIG));
    let unknown = Key::new("nobody.".parse().unwrap(), Algorithm::HmacSha256, b"z");
    let outcome = verify_message(&query, &unknown, None, NOW).unwrap().unwrap();
    let (resp, _) = respond(&outcome, NOW);
    assert_eq!(TsigRecord::find(&resp).unwrap().unwrap().error, Rcode::BADKEY);
    // OK: a normal signed response the client accepts.
    let outcome = verify_message(&query, &k, None, NOW).unwrap().unwrap();
    let (resp, _) = respond(&outcome, NOW);
    let client = verify_message(&resp, &k, Some(qmac.as_slice()), NOW).unwrap().unwrap();
    assert_eq!(client.status, TsigStatus::Ok);
}

#[test]
fn sequences_rfc8945_5_3_1() {
    let k = key(Algorithm::HmacSha384);
    let (_, qmac) = signed(&k, 9, None, NOW);
    let mut signer = SequenceSigner::new(&k, qmac.as_slice());
    let mut messages = Vec::new();
    for i in 0..5u8 {
        let mut buf = [0u8; 512];
        let mut table = CompressionTable::new();
        let mut w = MessageWriter::new(&mut buf, 512, &mut table).unwrap();
        w.set_id(9);
        let owner: Name = format!("r{i}.example.").parse().unwrap();
        w.push_record(Section::Answer, &owner, Rtype::A, crate::types::Class::IN, 60, &[i; 4])
            .unwrap();
        // Messages 2 and 3 go unsigned, covered by message 4.
        if i == 2 || i == 3 {
            signer.skip(w.as_bytes()).unwrap();
        } else {
            signer.sign(&mut w, NOW + u64::from(i)).unwrap();
        }
        messages.push(w.finish().to_vec());
    }
    let mut verifier = SequenceVerifier::new(&k, qmac.as_slice());
    let steps: Vec<_> = messages.iter().map(|m| verifier.verify(m, NOW).unwrap()).collect();
    let ok = SequenceStep::Signed(TsigStatus::Ok);
    assert_eq!(steps, [ok, ok, SequenceStep::Unsigned, SequenceStep::Unsigned, ok]);
    // Dropping an unsigned message breaks the chain.
    let mut verifier = SequenceVerifier::new(&k, qmac.as_slice());
    for m in [&messages[0], &messages[1], &messages[2]] {
        verifier.verify(m, NOW).unwrap();
    }
    assert_eq!(
        verifier.verify(&messages[4], NOW).unwrap(),
        SequenceStep::Signed(TsigStatus::BadSig)
    );
    // A later message checked as if it were the first: its digest differs.
    let mut verifier = SequenceVerifier::new(&k, qmac.as_slice());
    assert_eq!(
        verifier.verify(&messages[1], NOW).unwrap(),
        SequenceStep::Signed(TsigStatus::BadSig)
    );
    // A sequence must start signed, on both sides.
    let mut verifier = SequenceVerifier::new(&k, qmac.as_slice());
    assert!(verifier.verify(&messages[2], NOW).is_err());
    assert!(SequenceSigner::new(&k, qmac.as_slice()).skip(&messages[2]).is_err());
    // With the TSIG record found by a reader that walked each message (as a transfer
    // does), the same steps; a byte changed in a later signed message is BADSIG.
    fn found(m: &[u8]) -> Option<TsigRecord<'_>> {
        let mut reader = MessageReader::new(m).unwrap();
        reader.finish().unwrap();
        reader.tsig_offset().map(|at| TsigRecord::parse_at(m, at).unwrap())
    }
    let mut verifier = SequenceVerifier::new(&k, qmac.as_slice());
    let steps: Vec<_> =
        messages.iter().map(|m| verifier.verify_found(m, found(m), NOW).unwrap()).collect();
    assert_eq!(steps, [ok, ok, SequenceStep::Unsigned, SequenceStep::Unsigned, ok]);
    let mut tampered = messages[4].clone();
    tampered[20] ^= 1; // in the answer record's owner name
    let mut verifier = SequenceVerifier::new(&k, qmac.as_slice());
    for m in &messages[..4] {
        verifier.verify_found(m, found(m), NOW).unwrap();
    }
    let step = verifier.verify_found(&tampered, found(&tampered), NOW).unwrap();
    assert_eq!(step, SequenceStep::Signed(TsigStatus::BadSig));
}

#[test]
fn algorithm_names() {
    assert_eq!(Algorithm::from_text("HMAC-SHA256."), Some(Algorithm::HmacSha256));
    assert_eq!(Algorithm::from_text("hmac-sha1"), Some(Algorithm::HmacSha1));
    assert_eq!(Algorithm::from_text("hmac-md5.sig-alg.reg.int"), Some(Algorithm::HmacMd5));
    assert_eq!(Algorithm::from_text("HMAC-MD5"), Some(Algorithm::HmacMd5));
    assert_eq!(Algorithm::from_text("hmac-sha224"), Some(Algorithm::HmacSha224));
    assert_eq!(Algorithm::from_text("hmac-sha999"), None);
    assert_eq!(Algorithm::HmacMd5.to_string(), "hmac-md5.sig-alg.reg.int.");
    assert_eq!(Algorithm::HmacMd5.min_mac_len(), 10);
    for a in Algorithm::ALL {
        assert_eq!(Algorithm::from_text(a.config_name()), Some(a));
    }
    assert_eq!(Algorithm::HmacSha512.to_string(), "hmac-sha512.");
    assert_eq!(Algorithm::HmacSha384.min_mac_len(), 24);
    assert_eq!(Algorithm::HmacSha1.min_mac_len(), 10);
}

#[test]
fn secrets_in_base64() {
    let name: Name = "k.".parse().unwrap();
    let text = secret_to_base64(b"0123456789abcdef");
    assert_eq!(text, "MDEyMzQ1Njc4OWFiY2RlZg==");
    let a = Key::from_base64(name.clone(), Algorithm::HmacSha256, &text).unwrap();
    let b = Key::new(name.clone(), Algorithm::HmacSha256, b"0123456789abcdef");
    let mut ctx = (a.context(), b.context());
    ctx.0.update(b"m");
    ctx.1.update(b"m");
    assert_eq!(ctx.0.sign().as_ref(), ctx.1.sign().as_ref());
    assert!(Key::from_base64(name.clone(), Algorithm::HmacSha256, "MDEy MzQ1\n").is_ok());
    assert!(Key::from_base64(name.clone(), Algorithm::HmacSha256, "not base64!").is_err());
    assert!(Key::from_base64(name, Algorithm::HmacSha256, "").is_err());
}

#[test]
fn record_len_is_what_signing_adds() {
    for alg in Algorithm::ALL {
        let k = key(alg);
        let mut buf = [0u8; 1024];
        let mut table = CompressionTable::new();
        let mut w = MessageWriter::new(&mut buf, 1024, &mut table).unwrap();
        let qname: Name = "www.example.".parse().unwrap();
        w.push_question(&qname, Rtype::A, crate::types::Class::IN).unwrap();
        let before = w.len();
        w.sign_tsig(&k, None, &TsigFields::at(NOW)).unwrap();
        assert_eq!(w.len() - before, record_len(&k), "{alg}");
    }
}

/// RFC 8945 §5.2.3 with the server's cap: a request is BADTIME outside the smaller of
/// its own fudge and the cap; a client's fudge of 65535 does not widen the window.
#[test]
fn requests_are_checked_against_the_smaller_of_their_fudge_and_the_cap() {
    let k = key(Algorithm::HmacSha256);
    let mut buf = [0u8; 512];
    let mut table = CompressionTable::new();
    let mut w = MessageWriter::new(&mut buf, 512, &mut table).unwrap();
    w.push_question(&"www.example.".parse::<Name>().unwrap(), Rtype::A, crate::types::Class::IN)
        .unwrap();
    w.sign_tsig(&k, None, &TsigFields { fudge: 65535, ..TsigFields::at(NOW) }).unwrap();
    let wide = w.finish().to_vec();
    let status =
        |msg: &[u8], now: u64, cap: u16| verify_request(msg, &k, now, cap).unwrap().unwrap().status;
    assert_eq!(
        verify_message(&wide, &k, None, NOW + 3600).unwrap().unwrap().status,
        TsigStatus::Ok
    );
    assert_eq!(status(&wide, NOW + 3600, 300), TsigStatus::BadTime);
    assert_eq!(status(&wide, NOW - 301, 300), TsigStatus::BadTime);
    assert_eq!(status(&wide, NOW + 300, 300), TsigStatus::Ok);
    assert_eq!(status(&wide, NOW + 3600, 3600), TsigStatus::Ok);
    let (narrow, _) = signed(&k, 7, None, NOW); // fudge 300
    assert_eq!(status(&narrow, NOW + 301, 3600), TsigStatus::BadTime, "its own fudge");
    let outcome = verify_request(&wide, &k, NOW + 3600, 300).unwrap().unwrap();
    let (resp, _) = respond(&outcome, NOW + 3600);
    let tsig = TsigRecord::find(&resp).unwrap().unwrap();
    assert_eq!((tsig.error, tsig.fudge), (Rcode::BADTIME, 65535), "the client's fudge echoed");
}
