//! Property tests: for generated typed values of every type, wire → struct → wire →
//! struct is the identity and text → wire → text → wire too; for arbitrary bytes of any
//! known type, `validate` agrees with the typed decoder and whatever is valid survives
//! printing and re-parsing.

use std::net::{Ipv4Addr, Ipv6Addr};

use proptest::prelude::*;
use proptest::strategy::Union;

use crate::name::{Name, NameBuilder};
use crate::rdata::*;
use crate::types::Rtype;

fn name() -> impl Strategy<Value = Name> {
    prop::collection::vec(prop::collection::vec(any::<u8>(), 1..12), 0..5).prop_map(|labels| {
        let mut b = NameBuilder::new();
        for l in &labels {
            b.push_label(l).unwrap();
        }
        b.finish().unwrap().to_name()
    })
}

fn bytes(len: std::ops::Range<usize>) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), len)
}

fn char_string() -> impl Strategy<Value = CharString> {
    bytes(0..40).prop_map(|b| CharString::new(b).unwrap())
}

fn types() -> impl Strategy<Value = Vec<Rtype>> {
    prop::collection::vec(prop_oneof![1u16..70, 1u16..=u16::MAX], 0..12).prop_map(|mut v| {
        v.sort_unstable();
        v.dedup();
        v.into_iter().map(Rtype).collect()
    })
}

fn gateway() -> impl Strategy<Value = Gateway> {
    prop_oneof![
        Just(Gateway::None),
        any::<[u8; 4]>().prop_map(|a| Gateway::Ipv4(Ipv4Addr::from(a))),
        any::<[u8; 16]>().prop_map(|a| Gateway::Ipv6(Ipv6Addr::from(a))),
        name().prop_map(Gateway::Name),
    ]
}

fn size_byte() -> impl Strategy<Value = u8> {
    prop_oneof![Just(0u8), (1u8..=9, 0u8..=9).prop_map(|(m, e)| m << 4 | e)]
}

fn loc() -> impl Strategy<Value = Loc> {
    let lat = (1u32 << 31) - 90 * 3_600_000..=(1u32 << 31) + 90 * 3_600_000;
    let lon = (1u32 << 31) - 180 * 3_600_000..=(1u32 << 31) + 180 * 3_600_000;
    (size_byte(), size_byte(), size_byte(), lat, lon, any::<u32>()).prop_map(
        |(s, h, v, la, lo, al)| Loc {
            version: 0,
            size: s,
            horizontal_precision: h,
            vertical_precision: v,
            latitude: la,
            longitude: lo,
            altitude: al,
        },
    )
}

fn apl_item() -> impl Strategy<Value = AplItem> {
    let v4 = (bytes(0..5), 0u8..=32, any::<bool>()).prop_map(|(a, p, n)| (1u16, a, p, n));
    let v6 = (bytes(0..17), 0u8..=128, any::<bool>()).prop_map(|(a, p, n)| (2u16, a, p, n));
    prop_oneof![v4, v6].prop_map(|(family, mut address, prefix, negation)| {
        while address.last() == Some(&0) {
            address.pop();
        }
        AplItem { family, prefix, negation, address }
    })
}

fn svc_params() -> impl Strategy<Value = Vec<SvcParam>> {
    let alpn = prop::collection::vec(bytes(1..8), 1..4).prop_map(|ids| {
        ids.iter()
            .flat_map(|id| std::iter::once(id.len() as u8).chain(id.iter().copied()))
            .collect::<Vec<u8>>()
    });
    (
        prop::option::of(alpn),
        prop::option::of(any::<u16>()),
        prop::option::of(prop::collection::vec(any::<[u8; 4]>(), 1..3)),
        prop::option::of(bytes(1..20)),
        prop::option::of((9u16..65535, bytes(0..20))),
        any::<bool>(),
    )
        .prop_map(|(alpn, port, v4, ech, generic, mandatory)| {
            let mut params = Vec::new();
            if let Some(v) = alpn {
                params.push(SvcParam { key: SvcParam::ALPN, value: v });
            }
            if let Some(p) = port {
                params.push(SvcParam { key: SvcParam::PORT, value: p.to_be_bytes().to_vec() });
            }
            if let Some(v) = v4 {
                params.push(SvcParam { key: SvcParam::IPV4HINT, value: v.concat() });
            }
            if let Some(v) = ech {
                params.push(SvcParam { key: SvcParam::ECH, value: v });
            }
            if let Some((key, value)) = generic {
                params.push(SvcParam { key, value });
            }
            if mandatory && !params.is_empty() {
                let keys: Vec<u8> = params.iter().flat_map(|p| p.key.to_be_bytes()).collect();
                params.insert(0, SvcParam { key: SvcParam::MANDATORY, value: keys });
            }
            params
        })
}

fn target() -> impl Strategy<Value = Target> {
    name().prop_map(|target| Target { target })
}

fn exchange() -> impl Strategy<Value = Exchange> {
    (any::<u16>(), name()).prop_map(|(preference, exchange)| Exchange { preference, exchange })
}

fn txt() -> impl Strategy<Value = Txt> {
    prop::collection::vec(char_string(), 1..4).prop_map(|strings| Txt { strings })
}

fn ds() -> impl Strategy<Value = Ds> {
    let digest = prop_oneof![
        (5u8..=255, bytes(0..40)),
        bytes(32..33).prop_map(|d| (2u8, d)),
        bytes(20..21).prop_map(|d| (1u8, d)),
    ];
    (any::<u16>(), any::<u8>(), digest).prop_map(|(key_tag, algorithm, (digest_type, digest))| Ds {
        key_tag,
        algorithm,
        digest_type,
        digest,
    })
}

fn dnskey() -> impl Strategy<Value = Dnskey> {
    (any::<u16>(), any::<u8>(), any::<u8>(), bytes(0..50)).prop_map(
        |(flags, protocol, algorithm, public_key)| Dnskey {
            flags,
            protocol,
            algorithm,
            public_key,
        },
    )
}

fn rkey() -> impl Strategy<Value = Rkey> {
    (any::<u8>(), any::<u8>(), bytes(1..50)).prop_map(|(protocol, algorithm, public_key)| Rkey {
        flags: 0,
        protocol,
        algorithm,
        public_key,
    })
}

fn rrsig() -> impl Strategy<Value = Rrsig> {
    (any::<u16>(), any::<u8>(), any::<u8>(), any::<[u32; 3]>(), any::<u16>(), name(), bytes(0..50))
        .prop_map(
            |(
                t,
                algorithm,
                labels,
                [original_ttl, expiration, inception],
                key_tag,
                signer,
                signature,
            )| Rrsig {
                type_covered: Rtype(t),
                algorithm,
                labels,
                original_ttl,
                expiration,
                inception,
                key_tag,
                signer,
                signature,
            },
        )
}

fn tlsa() -> impl Strategy<Value = Tlsa> {
    let data = prop_oneof![(3u8..=255, bytes(0..40)), bytes(32..33).prop_map(|d| (1u8, d))];
    (any::<[u8; 2]>(), data).prop_map(|([usage, selector], (matching_type, data))| Tlsa {
        usage,
        selector,
        matching_type,
        data,
    })
}

fn svcb() -> impl Strategy<Value = Svcb> {
    (any::<u16>(), name(), svc_params()).prop_map(|(priority, target, params)| Svcb {
        priority,
        target,
        params,
    })
}

fn pair() -> impl Strategy<Value = NamePair> {
    (name(), name()).prop_map(|(first, second)| NamePair { first, second })
}

/// Generated values of the RFC 1035 family, addresses, services and locations.
fn classic_arms() -> Vec<BoxedStrategy<Rdata>> {
    vec![
        any::<[u8; 4]>().prop_map(|a| Rdata::A(A { address: Ipv4Addr::from(a) })).boxed(),
        any::<[u8; 16]>().prop_map(|a| Rdata::Aaaa(Aaaa { address: Ipv6Addr::from(a) })).boxed(),
        target().prop_map(Rdata::Ns).boxed(),
        target().prop_map(Rdata::Cname).boxed(),
        target().prop_map(Rdata::Dname).boxed(),
        target().prop_map(Rdata::Ptr).boxed(),
        target().prop_map(Rdata::NsapPtr).boxed(),
        (name(), name(), any::<[u32; 5]>())
            .prop_map(|(mname, rname, [serial, refresh, retry, expire, minimum])| {
                Rdata::Soa(Soa { mname, rname, serial, refresh, retry, expire, minimum })
            })
            .boxed(),
        exchange().prop_map(Rdata::Mx).boxed(),
        exchange().prop_map(Rdata::Kx).boxed(),
        exchange().prop_map(Rdata::Lp).boxed(),
        txt().prop_map(Rdata::Txt).boxed(),
        txt().prop_map(Rdata::Spf).boxed(),
        txt().prop_map(Rdata::Resinfo).boxed(),
        (char_string(), char_string())
            .prop_map(|(cpu, os)| Rdata::Hinfo(Hinfo { cpu, os }))
            .boxed(),
        pair().prop_map(Rdata::Rp).boxed(),
        pair().prop_map(Rdata::Minfo).boxed(),
        char_string().prop_map(|address| Rdata::X25(X25 { address })).boxed(),
        (char_string(), prop::option::of(char_string()))
            .prop_map(|(address, subaddress)| Rdata::Isdn(Isdn { address, subaddress }))
            .boxed(),
        (any::<u8>(), bytes(1..20), bytes(1..60), prop::collection::vec(name(), 0..3))
            .prop_map(|(algorithm, hit, public_key, servers)| {
                Rdata::Hip(Hip { algorithm, hit, public_key, servers })
            })
            .boxed(),
        (any::<u16>(), name(), name())
            .prop_map(|(preference, map822, mapx400)| Rdata::Px(Px { preference, map822, mapx400 }))
            .boxed(),
        loc().prop_map(Rdata::Loc).boxed(),
        (any::<[u16; 3]>(), name())
            .prop_map(|([priority, weight, port], target)| {
                Rdata::Srv(Srv { priority, weight, port, target })
            })
            .boxed(),
        (any::<[u16; 2]>(), char_string(), char_string(), char_string(), name())
            .prop_map(|([order, preference], flags, services, regexp, replacement)| {
                Rdata::Naptr(Naptr { order, preference, flags, services, regexp, replacement })
            })
            .boxed(),
        (any::<u16>(), any::<u16>(), any::<u8>(), bytes(0..40))
            .prop_map(|(cert_type, key_tag, algorithm, certificate)| {
                Rdata::Cert(Cert { cert_type, key_tag, algorithm, certificate })
            })
            .boxed(),
        prop::collection::vec(apl_item(), 0..4).prop_map(|items| Rdata::Apl(Apl { items })).boxed(),
    ]
}

/// Generated values of the DNSSEC and key-carrying types.
fn dnssec_arms() -> Vec<BoxedStrategy<Rdata>> {
    vec![
        ds().prop_map(Rdata::Ds).boxed(),
        ds().prop_map(Rdata::Cds).boxed(),
        (any::<u8>(), prop_oneof![(3u8..=255, bytes(0..40)), bytes(20..21).prop_map(|d| (1u8, d))])
            .prop_map(|(algorithm, (fp_type, fingerprint))| {
                Rdata::Sshfp(Sshfp { algorithm, fp_type, fingerprint })
            })
            .boxed(),
        (any::<[u8; 2]>(), gateway(), bytes(0..40))
            .prop_map(|([precedence, algorithm], gateway, public_key)| {
                Rdata::Ipseckey(Ipseckey { precedence, algorithm, gateway, public_key })
            })
            .boxed(),
        rrsig().prop_map(Rdata::Rrsig).boxed(),
        rrsig().prop_map(Rdata::Sig).boxed(),
        (name(), types()).prop_map(|(next, types)| Rdata::Nsec(Nsec { next, types })).boxed(),
        dnskey().prop_map(Rdata::Dnskey).boxed(),
        dnskey().prop_map(Rdata::Cdnskey).boxed(),
        dnskey().prop_map(Rdata::Key).boxed(),
        bytes(0..40).prop_map(|data| Rdata::Dhcid(Dhcid { data })).boxed(),
        (any::<[u8; 2]>(), any::<u16>(), char_string(), bytes(1..40), types())
            .prop_map(|([algorithm, flags], iterations, salt, hash, types)| {
                let next_hashed = CharString::new(hash).unwrap();
                Rdata::Nsec3(Nsec3 { algorithm, flags, iterations, salt, next_hashed, types })
            })
            .boxed(),
        (any::<[u8; 2]>(), any::<u16>(), char_string())
            .prop_map(|([algorithm, flags], iterations, salt)| {
                Rdata::Nsec3param(Nsec3param { algorithm, flags, iterations, salt })
            })
            .boxed(),
        tlsa().prop_map(Rdata::Tlsa).boxed(),
        tlsa().prop_map(Rdata::Smimea).boxed(),
        bytes(0..60).prop_map(|public_key| Rdata::Openpgpkey(Openpgpkey { public_key })).boxed(),
        (any::<u32>(), any::<u16>(), types())
            .prop_map(|(serial, flags, types)| Rdata::Csync(Csync { serial, flags, types }))
            .boxed(),
        (
            any::<u32>(),
            any::<u8>(),
            prop_oneof![(3u8..=255, bytes(12..70)), bytes(48..49).prop_map(|d| (1u8, d))],
        )
            .prop_map(|(serial, scheme, (hash_algorithm, digest))| {
                Rdata::Zonemd(Zonemd { serial, scheme, hash_algorithm, digest })
            })
            .boxed(),
    ]
}

/// Generated values of SVCB/HTTPS, the ILNP and EUI types, URI, CAA, AMTRELAY and unknown types.
fn other_arms() -> Vec<BoxedStrategy<Rdata>> {
    vec![
        svcb().prop_map(Rdata::Svcb).boxed(),
        svcb().prop_map(Rdata::Https).boxed(),
        (any::<u16>(), any::<u64>())
            .prop_map(|(preference, node_id)| Rdata::Nid(Nid { preference, node_id }))
            .boxed(),
        (any::<u16>(), any::<[u8; 4]>())
            .prop_map(|(preference, l)| Rdata::L32(L32 { preference, locator: Ipv4Addr::from(l) }))
            .boxed(),
        (any::<u16>(), any::<u64>())
            .prop_map(|(preference, locator)| Rdata::L64(L64 { preference, locator }))
            .boxed(),
        any::<[u8; 6]>().prop_map(|address| Rdata::Eui48(Eui48 { address })).boxed(),
        any::<[u8; 8]>().prop_map(|address| Rdata::Eui64(Eui64 { address })).boxed(),
        (any::<[u16; 2]>(), bytes(1..60))
            .prop_map(|([priority, weight], target)| Rdata::Uri(Uri { priority, weight, target }))
            .boxed(),
        (any::<u8>(), "[a-zA-Z0-9]{1,15}", bytes(0..60))
            .prop_map(|(flags, tag, value)| {
                Rdata::Caa(Caa { flags, tag: CharString::new(tag.into_bytes()).unwrap(), value })
            })
            .boxed(),
        (any::<u8>(), any::<bool>(), gateway())
            .prop_map(|(precedence, discovery_optional, relay)| {
                Rdata::Amtrelay(Amtrelay { precedence, discovery_optional, relay })
            })
            .boxed(),
        (any::<u16>(), bytes(0..20))
            .prop_map(|(t, data)| Rdata::Unknown { rtype: Rtype(65280 + t % 255), data })
            .boxed(),
    ]
}

/// A GPOS number within ±`limit`: optionally signed, with or without a fraction.
fn gpos_number(limit: u32) -> impl Strategy<Value = CharString> {
    let sign = prop::sample::select(vec!["", "+", "-"]);
    let frac = prop::sample::select(vec!["", ".", ".5", ".0001", ".25"]);
    (sign, 0..limit, frac).prop_map(|(sign, whole, frac)| {
        CharString::new(format!("{sign}{whole}{frac}").into_bytes()).unwrap()
    })
}

/// Generated values of the historic and draft types BIND loads: WKS, NSAP, GPOS, A6,
/// NXT, RKEY and DOA.
fn legacy_arms() -> Vec<BoxedStrategy<Rdata>> {
    let ports = prop::collection::vec(prop_oneof![4 => 0u16..1024, 1 => any::<u16>()], 0..6);
    let a6_name = |prefix_len: u8| match prefix_len {
        0 => Just(None).boxed(),
        _ => name().prop_map(Some).boxed(),
    };
    vec![
        (any::<[u8; 4]>(), any::<u8>(), ports)
            .prop_map(|(a, protocol, ports)| {
                Rdata::Wks(Wks { address: Ipv4Addr::from(a), protocol, ports })
            })
            .boxed(),
        bytes(1..30).prop_map(|address| Rdata::Nsap(Nsap { address })).boxed(),
        (gpos_number(90), gpos_number(180), gpos_number(100_000))
            .prop_map(|(longitude, latitude, altitude)| {
                Rdata::Gpos(Gpos { longitude, latitude, altitude })
            })
            .boxed(),
        (0u8..=128, any::<[u8; 16]>())
            .prop_flat_map(move |(prefix_len, suffix)| {
                (Just(prefix_len), Just(suffix), a6_name(prefix_len))
            })
            .prop_map(|(prefix_len, suffix, prefix_name)| {
                Rdata::A6(A6 { prefix_len, suffix: Ipv6Addr::from(suffix), prefix_name })
            })
            .boxed(),
        (name(), prop::collection::vec(1u16..=127, 0..10))
            .prop_map(|(next, types)| {
                Rdata::Nxt(Nxt { next, types: types.into_iter().map(Rtype).collect() })
            })
            .boxed(),
        rkey().prop_map(Rdata::Rkey).boxed(),
        (any::<[u32; 2]>(), any::<u8>(), char_string(), bytes(0..40))
            .prop_map(|([enterprise, doa_type], location, media_type, data)| {
                Rdata::Doa(Doa { enterprise, doa_type, location, media_type, data })
            })
            .boxed(),
    ]
}

/// A generated value of every known type.
fn rdata() -> impl Strategy<Value = Rdata> {
    Union::new([classic_arms(), dnssec_arms(), other_arms(), legacy_arms()].concat())
}

/// Every type code with a known format.
fn known_rtype() -> impl Strategy<Value = Rtype> {
    let known: Vec<Rtype> = (0..=u16::MAX).map(Rtype).filter(|&t| is_known(t)).collect();
    prop::sample::select(known)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn typed_wire_and_text_round_trips(value in rdata()) {
        let rtype = value.rtype();
        let wire = value.to_wire_vec();
        prop_assert!(validate(rtype, &wire).is_ok(), "{rtype} {value:?}: {:?}", validate(rtype, &wire));
        let decoded = Rdata::from_wire(rtype, &wire).unwrap();
        prop_assert_eq!(decoded.to_wire_vec(), wire.clone());
        let redecoded = Rdata::from_wire(rtype, &decoded.to_wire_vec()).unwrap();
        prop_assert_eq!(&redecoded, &decoded);
        let text = to_text(rtype, &wire);
        prop_assert!(!text.starts_with("\\#") || !is_known(rtype), "{rtype} printed generically: {text}");
        let reparsed = parse_str(rtype, &text, None);
        prop_assert_eq!(reparsed.as_deref().ok(), Some(&wire[..]), "{} {}: {:?}", rtype, text, reparsed);
        let mut canonical = Vec::new();
        prop_assert!(canonical_wire(rtype, &wire, &mut canonical).is_ok());
        prop_assert_eq!(canonical.len(), wire.len());
    }

    #[test]
    fn arbitrary_bytes_check_decode_and_print_agree(rtype in known_rtype(), wire in bytes(0..80)) {
        let checked = validate(rtype, &wire);
        let decoded = Rdata::from_wire(rtype, &wire);
        prop_assert_eq!(checked.is_ok(), decoded.is_ok(), "{} {:02x?}", rtype, wire);
        let text = to_text(rtype, &wire);
        if let Ok(value) = decoded {
            prop_assert_eq!(value.to_wire_vec(), wire.clone());
            let reparsed = parse_str(rtype, &text, None);
            prop_assert_eq!(reparsed.as_deref().ok(), Some(&wire[..]), "{} {}", rtype, text);
        } else {
            prop_assert!(text.starts_with("\\#"), "{rtype} invalid wire printed as {text}");
        }
    }
}
