"""Unit tests of the conformance harness itself (run first by run.sh).

The comparison must neither hide a real difference nor report a false one: these tests
pin normalization, the TCP/UDP rule, the allowlist and the malformed-query recipes on
literal wire bytes.
"""

import os
import struct
import tempfile
import unittest

from normalize import normalize
from queries import Query, generate
from report import Allowlist, signature, tcp_udp_mismatch

QNAME = b"\x03www\x07example\x03com\x00"


def response(flags=0x8400, answers=(), owner=b"\xc0\x0c"):
    """A response to `www.example.com. A` with A records `answers` (4-byte strings)."""
    header = struct.pack("!HHHHHH", 1, flags, 1, len(answers), 0, 0)
    body = QNAME + struct.pack("!HH", 1, 1)
    for rdata in answers:
        body += owner + struct.pack("!HHIH", 1, 1, 3600, len(rdata)) + rdata
    return header + body


class Normalize(unittest.TestCase):
    def test_fields_of_an_answer(self):
        got = normalize(response(answers=[b"\xc0\x00\x02\x01"]))
        self.assertEqual(got["rcode"], "NOERROR")
        self.assertEqual(got["flags"], "qr aa")
        self.assertEqual(got["question"], "www.example.com. IN A")
        self.assertEqual(got["answer"], "www.example.com. 3600 IN A 192.0.2.1")
        self.assertEqual(got["edns"], "none")

    def test_order_does_not_matter_duplicates_do(self):
        a, b = b"\xc0\x00\x02\x01", b"\xc0\x00\x02\x02"
        self.assertEqual(normalize(response(answers=[a, b])), normalize(response(answers=[b, a])))
        self.assertNotEqual(normalize(response(answers=[a])), normalize(response(answers=[a, a])))

    def test_owner_case_is_ignored_unless_asked(self):
        upper = b"\x03WWW\x07example\x03com\x00"
        one = response(answers=[b"\xc0\x00\x02\x01"])
        other = response(answers=[b"\xc0\x00\x02\x01"], owner=upper)
        self.assertEqual(normalize(one), normalize(other))
        self.assertNotEqual(normalize(one, exact_case=True), normalize(other, exact_case=True))

    def test_header_bits_and_ttl_count(self):
        base = response(answers=[b"\xc0\x00\x02\x01"])
        self.assertNotEqual(normalize(base), normalize(response(flags=0x8440, answers=[
            b"\xc0\x00\x02\x01"])))
        other_ttl = base[:-10] + struct.pack("!I", 60) + base[-6:]
        self.assertNotEqual(normalize(base), normalize(other_ttl))

    def test_no_and_short_answers(self):
        self.assertEqual(normalize(None), {"result": "no answer"})
        self.assertTrue(normalize(b"\x00\x01\x84").get("result").startswith("short"))
        self.assertTrue(normalize(response()[:-3]).get("result").startswith("unparsable"))


class Rules(unittest.TestCase):
    def test_tcp_may_add_additional_records_only(self):
        tcp = {"result": "answer", "flags": "qr aa", "answer": "x", "additional": "a\nb"}
        self.assertEqual(tcp_udp_mismatch(tcp, dict(tcp, additional="a")), [])
        self.assertEqual(tcp_udp_mismatch(tcp, dict(tcp, additional="c")), ["additional"])
        self.assertEqual(tcp_udp_mismatch(tcp, dict(tcp, answer="y")), ["answer"])
        self.assertEqual(tcp_udp_mismatch(tcp, dict(tcp, flags="qr aa tc", answer="")), [])

    def test_signature_names_the_difference(self):
        a = {"result": "answer", "rcode": "NOERROR", "authority": "x. 1 IN NS y."}
        b = {"result": "answer", "rcode": "NXDOMAIN", "authority": ""}
        self.assertEqual(signature("knot", a, "nsd", b),
                         "rcode: knot 'NOERROR' / nsd 'NXDOMAIN'; authority: knot has +NS")

    def test_allowlist_globs_and_requires_a_reason(self):
        with tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False) as f:
            f.write('[[allow]]\nmatch = "rfc8906/nsid"\nreason = "RFC 5001"\n')
        try:
            allow = Allowlist(f.name)
            self.assertIsNotNone(allow.find("rfc8906/nsid"))
            self.assertIsNone(allow.find("rfc8906/nsid/x"))
            with open(f.name, "w") as g:
                g.write('[[allow]]\nmatch = "x"\n')
            with self.assertRaises(ValueError):
                Allowlist(f.name)
        finally:
            os.unlink(f.name)


class Queries(unittest.TestCase):
    def test_variants_and_recipes(self):
        plain = Query(key="k", qname="example.com.", qtype="SOA").wire(7)
        self.assertEqual(struct.unpack("!HHHHHH", plain[:12]), (7, 0, 1, 0, 0, 0))
        edns = Query(key="k", qname="example.com.", qtype="SOA", use_edns=0).wire(7)
        self.assertEqual(struct.unpack("!H", edns[10:12])[0], 1)
        two = Query(key="k", qname="example.com.", qtype="SOA", mangle="qdcount2").wire(7)
        self.assertEqual(struct.unpack("!H", two[4:6])[0], 2)
        self.assertEqual(two[12:12 + 17], two[12 + 17:])
        op15 = Query(key="k", qname="example.com.", qtype="SOA", opcode=15).wire(7)
        self.assertEqual(op15[2] >> 3 & 0xF, 15)
        dso = Query(key="k", qname="example.com.", qtype="SOA", opcode=6,
                    mangle="dso-keepalive").wire(7)
        self.assertEqual(struct.unpack("!HHHH", dso[4:12]), (0, 0, 0, 0))
        self.assertEqual(dso[2] >> 3 & 0xF, 6)
        self.assertEqual(dso[12:], struct.pack("!HHII", 1, 8, 15000, 15000))

    def test_set_is_deterministic_with_unique_keys(self):
        first, second = generate(), generate()
        self.assertEqual([q.key for q in first], [q.key for q in second])
        self.assertEqual(len({q.key for q in first}), len(first))
        self.assertGreater(len(first), 10_000)


if __name__ == "__main__":
    unittest.main()


def answer(flags, answer="", authority="", additional=""):
    """A normalized answer with these flags and sections."""
    return {"result": "answer", "opcode": "QUERY", "rcode": "NOERROR", "flags": flags,
            "question": "x.tld. IN A", "edns": "version=0 payload=1232 flags=0x8000 options=[]",
            "answer": answer, "authority": authority, "additional": additional}


NS = "x.tld. 86400 IN NS ns1.x.tld."
GLUE = "ns1.x.tld. 86400 IN A 192.0.2.1"
SIBLING = "ns1.y.tld. 86400 IN A 192.0.2.2"
DS = "x.tld. 86400 IN DS 1 13 2 AA"
DS_SIG = "x.tld. 86400 IN RRSIG DS 13 2 86400 20450101000000 20260101000000 1 tld. AA=="
GLUE_SIG = "ns1.x.tld. 86400 IN RRSIG A 13 3 86400 20450101000000 20260101000000 1 tld. AA=="


class Truncation(unittest.TestCase):
    """The rule `scale.py` holds 512-byte DO answers to (RFC 2181 §9, RFC 4035 §3.1.1,
    RFC 9471)."""

    full = answer("qr", authority="\n".join([NS, DS, DS_SIG]),
                  additional="\n".join([GLUE, GLUE_SIG, SIBLING]))

    def check(self, part):
        from scale import truncation_problems
        return truncation_problems(part, self.full)

    def test_whole_answer_and_optional_data_left_out(self):
        self.assertEqual(self.check(self.full), [])
        # Sibling glue and an additional RRSIG may go without TC.
        self.assertEqual(self.check(answer("qr", authority=self.full["authority"],
                                           additional=GLUE)), [])

    def test_missing_required_data_needs_tc(self):
        no_sig = answer("qr", authority="\n".join([NS, DS]), additional=GLUE)
        self.assertEqual(self.check(no_sig), ["required records are missing but TC is clear"])
        self.assertEqual(self.check(dict(no_sig, flags="qr tc")), [])
        no_glue = answer("qr", authority=self.full["authority"])
        self.assertEqual(self.check(no_glue), ["required records are missing but TC is clear"])

    def test_tc_without_need_and_partial_rrsets_fail(self):
        self.assertEqual(self.check(dict(self.full, flags="qr tc")),
                         ["TC set though nothing required is missing"])
        partial = dict(self.full, authority="\n".join([NS, DS_SIG]),
                       answer="x.tld. 86400 IN A 192.0.2.9", flags="qr tc")
        problems = self.check(partial)
        self.assertIn("answer: ('x.tld.', 'A', '') is not the whole RRset", problems)
        self.assertEqual(self.check(dict(self.full, rcode="NXDOMAIN")),
                         ["rcode differs from the 1232-byte answer"])
