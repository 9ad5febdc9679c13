//! TSIG interoperability with dnspython (`dns.tsig`), for all four algorithms: messages it
//! signs verify with Tern and the other way round, single messages and sequences; a
//! tampered message gives BADSIG, an unknown key BADKEY, a skewed clock BADTIME.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing, clippy::panic)]

mod support;

use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::json;
use support::oracle::{hex, unhex, Oracle};
use tern_wire::message::{CompressionTable, MessageWriter, Section};
use tern_wire::tsig::{
    verify_message, Algorithm, Key, SequenceSigner, SequenceStep, SequenceVerifier, TsigFields,
    TsigStatus,
};
use tern_wire::{Class, Name, Rtype};

const SECRET: &[u8] = b"a shared secret of thirty-two b.";

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs()
}

fn key(alg: Algorithm) -> Key {
    Key::new("interop-key.example.".parse().unwrap(), alg, SECRET)
}

fn alg_text(alg: Algorithm) -> String {
    alg.name().to_string()
}

fn base(alg: Algorithm) -> serde_json::Value {
    json!({"alg": alg_text(alg), "secret": hex(SECRET), "key": "interop-key.example."})
}

fn with(mut v: serde_json::Value, extra: serde_json::Value) -> serde_json::Value {
    for (k, x) in extra.as_object().unwrap() {
        v[k] = x.clone();
    }
    v
}

/// A message signed by Tern: a query, or a response to `request_mac` with one answer.
fn tern_signed(key: &Key, request_mac: Option<&[u8]>, time: u64, answer: u8) -> Vec<u8> {
    let mut buf = [0u8; 1024];
    let mut table = CompressionTable::new();
    let mut w = MessageWriter::new(&mut buf, 1024, &mut table).unwrap();
    w.set_id(4242);
    let owner: Name = format!("r{answer}.example.").parse().unwrap();
    if request_mac.is_some() {
        w.set_flag(tern_wire::message::Flags::QR, true);
        w.push_record(Section::Answer, &owner, Rtype::A, Class::IN, 60, &[192, 0, 2, answer])
            .unwrap();
    } else {
        w.push_question(&owner, Rtype::SOA, Class::IN).unwrap();
    }
    w.sign_tsig(key, request_mac, &TsigFields::at(time)).unwrap();
    w.finish().to_vec()
}

#[test]
fn dnspython_signs_tern_verifies() {
    let Some(mut oracle) = Oracle::start() else {
        return;
    };
    for alg in Algorithm::ALL {
        let k = key(alg);
        let signed = oracle.ask(with(base(alg), json!({"op": "sign"})));
        let wire = unhex(signed["wire"].as_str().unwrap());
        let t = now();
        let outcome = verify_message(&wire, &k, None, t).unwrap().unwrap();
        assert_eq!(outcome.status, TsigStatus::Ok, "{alg}");
        assert_eq!(hex(outcome.mac.as_slice()), signed["mac"].as_str().unwrap());
        // Tampered: BADSIG. Unknown key: BADKEY. Clock 20 minutes off: BADTIME.
        let mut tampered = wire.clone();
        tampered[15] ^= 1;
        assert_eq!(
            verify_message(&tampered, &k, None, t).unwrap().unwrap().status,
            TsigStatus::BadSig
        );
        let stranger = Key::new("someone-else.".parse().unwrap(), alg, SECRET);
        assert_eq!(
            verify_message(&wire, &stranger, None, t).unwrap().unwrap().status,
            TsigStatus::BadKey
        );
        assert_eq!(
            verify_message(&wire, &k, None, t + 1200).unwrap().unwrap().status,
            TsigStatus::BadTime
        );
        // A response dnspython signs over our request MAC.
        let request = tern_signed(&k, None, t, 0);
        let qmac = verify_message(&request, &k, None, t).unwrap().unwrap().mac;
        let resp =
            oracle.ask(with(base(alg), json!({"op": "sign", "request_mac": hex(qmac.as_slice())})));
        let resp = unhex(resp["wire"].as_str().unwrap());
        let checked = verify_message(&resp, &k, Some(qmac.as_slice()), now()).unwrap().unwrap();
        assert_eq!(checked.status, TsigStatus::Ok, "{alg} response");
    }
}

#[test]
fn tern_signs_dnspython_verifies() {
    let Some(mut oracle) = Oracle::start() else {
        return;
    };
    for alg in Algorithm::ALL {
        let k = key(alg);
        let query = tern_signed(&k, None, now(), 0);
        let verdict = oracle.ask(with(base(alg), json!({"op": "verify", "wire": hex(&query)})));
        assert_eq!(verdict["ok"], true, "{alg}: {verdict}");
        // Tampered, wrong secret, stale: dnspython refuses as well.
        let mut tampered = query.clone();
        tampered[14] ^= 1;
        let verdict = oracle.ask(with(base(alg), json!({"op": "verify", "wire": hex(&tampered)})));
        assert_eq!(verdict["err"], "BadSignature", "{alg}");
        let stale = tern_signed(&k, None, now() - 3600, 0);
        let verdict = oracle.ask(with(base(alg), json!({"op": "verify", "wire": hex(&stale)})));
        assert_eq!(verdict["err"], "BadTime", "{alg}");
        // A response to a dnspython-signed request.
        let request = oracle.ask(with(base(alg), json!({"op": "sign"})));
        let qmac = unhex(request["mac"].as_str().unwrap());
        let resp = tern_signed(&k, Some(&qmac), now(), 1);
        let verdict = oracle.ask(with(
            base(alg),
            json!({"op": "verify", "wire": hex(&resp), "request_mac": hex(&qmac)}),
        ));
        assert_eq!(verdict["ok"], true, "{alg} response: {verdict}");
    }
}

#[test]
fn sequences_both_ways() {
    let Some(mut oracle) = Oracle::start() else {
        return;
    };
    for alg in Algorithm::ALL {
        let k = key(alg);
        let qmac = vec![0x5a; alg.mac_len()];
        // dnspython signs a 4-message sequence; Tern verifies it.
        let seq = oracle
            .ask(with(base(alg), json!({"op": "sign_seq", "count": 4, "request_mac": hex(&qmac)})));
        let mut verifier = SequenceVerifier::new(&k, &qmac);
        for w in seq["wires"].as_array().unwrap() {
            let step = verifier.verify(&unhex(w.as_str().unwrap()), now()).unwrap();
            assert_eq!(step, SequenceStep::Signed(TsigStatus::Ok), "{alg}");
        }
        // Tern signs a sequence with two unsigned messages in it; dnspython verifies it.
        let mut signer = SequenceSigner::new(&k, &qmac);
        let mut wires = Vec::new();
        for i in 0..5u8 {
            let mut buf = [0u8; 512];
            let mut table = CompressionTable::new();
            let mut w = MessageWriter::new(&mut buf, 512, &mut table).unwrap();
            w.set_id(4242);
            w.set_flag(tern_wire::message::Flags::QR, true);
            let owner: Name = format!("r{i}.example.").parse().unwrap();
            w.push_record(Section::Answer, &owner, Rtype::A, Class::IN, 60, &[192, 0, 2, i])
                .unwrap();
            if i == 1 || i == 2 {
                signer.skip(w.as_bytes()).unwrap();
            } else {
                signer.sign(&mut w, now()).unwrap();
            }
            wires.push(hex(w.finish()));
        }
        let verdict = oracle.ask(with(
            base(alg),
            json!({"op": "verify_seq", "wires": wires, "request_mac": hex(&qmac)}),
        ));
        assert_eq!(verdict["ok"], true, "{alg} sequence: {verdict}");
        // Dropping a message from the middle breaks it for dnspython too.
        let mut broken = wires.clone();
        broken.remove(2);
        let verdict = oracle.ask(with(
            base(alg),
            json!({"op": "verify_seq", "wires": broken, "request_mac": hex(&qmac)}),
        ));
        assert_eq!(verdict["ok"], false, "{alg} broken sequence");
    }
}
