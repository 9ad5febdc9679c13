"""Checks of the signed-zone benchmarks' pieces (`update_rate.py --signed`,
`sign_refresh.py`): `python3 -m unittest discover -s bench -p 'test_*.py'`."""

import argparse
import tempfile
import unittest

import dns.message
import dns.rcode
import dns.rrset

import sign_refresh
import update_rate

RRSIG_A = ("u1.tld.", 300, "IN", "RRSIG", "A 13 2 300 20450101000000 20260101000000 1 tld. AAAA")
RRSIG_NSEC = ("tld.", 300, "IN", "RRSIG", "NSEC 13 1 300 20450101000000 20260101000000 1 tld. AAAA")


def answer(rcode, answers=(), authority=()):
    response = dns.message.make_response(dns.message.make_query("u1.tld.", "A", want_dnssec=True))
    response.set_rcode(rcode)
    response.answer = [dns.rrset.from_text(*r) for r in answers]
    response.authority = [dns.rrset.from_text(*r) for r in authority]
    return response


class ProvenTest(unittest.TestCase):
    A = ("u1.tld.", 300, "IN", "A", "10.0.0.1")
    NSEC = ("tld.", 300, "IN", "NSEC", "a.tld. NS SOA RRSIG NSEC DNSKEY")

    def test_an_address_counts_only_with_its_rrsig(self):
        self.assertTrue(update_rate.proven(answer(dns.rcode.NOERROR, [self.A, RRSIG_A])))
        self.assertFalse(update_rate.proven(answer(dns.rcode.NOERROR, [self.A])))
        self.assertFalse(update_rate.proven(answer(dns.rcode.NOERROR, [self.A, RRSIG_NSEC])))

    def test_an_nxdomain_counts_only_with_a_signed_nsec(self):
        self.assertTrue(update_rate.proven(answer(dns.rcode.NXDOMAIN, authority=[self.NSEC, RRSIG_NSEC])))
        self.assertFalse(update_rate.proven(answer(dns.rcode.NXDOMAIN, authority=[self.NSEC])))
        self.assertFalse(update_rate.proven(answer(dns.rcode.NXDOMAIN)))


class SignedConfTest(unittest.TestCase):
    def conf(self, make, signed):
        with tempfile.TemporaryDirectory() as work:
            path, _ = make(5300, work, "/z/zone.txt", False, signed)
            with open(path) as f:
                return f.read()

    def test_tern_signs_with_a_csk_policy_only_when_asked(self):
        text = self.conf(update_rate.tern_conf, True)
        for line in ('dnssec-policy = "bench"', "[[policy]]", 'id = "bench"', 'scheme = "csk"'):
            self.assertIn(line, text)
        self.assertNotIn("policy", self.conf(update_rate.tern_conf, False))

    def test_knot_signs_with_a_csk_ecdsa_policy_attached_to_the_zone(self):
        text = self.conf(update_rate.knot_conf, True)
        for line in ("policy:\n  - id: bench\n    algorithm: ecdsap256sha256\n    single-type-signing: on\n",
                     "    acl: update\n    dnssec-signing: on\n    dnssec-policy: bench\n"):
            self.assertIn(line, text)
        self.assertNotIn("dnssec", self.conf(update_rate.knot_conf, False))

    def test_bind_refuses_to_sign(self):
        with self.assertRaises(ValueError):
            update_rate.bind_conf(5300, "/w", "/z", False, True)


class RefreshTest(unittest.TestCase):
    args = argparse.Namespace(validity="60s", refresh="50s")

    def conf(self, form):
        with tempfile.TemporaryDirectory() as work:
            with open(sign_refresh.conf(5300, work, "/z/zone.txt", form, self.args)) as f:
                return f.read()

    def test_only_the_refreshing_form_has_short_lifetimes(self):
        refreshing, idle = self.conf("refreshing"), self.conf("idle")
        self.assertIn('signature-validity = "60s"\nsignature-refresh = "50s"\n', refreshing)
        self.assertNotIn("signature-", idle)
        for text in (refreshing, idle):
            self.assertIn('dnssec-policy = "bench"', text)
            self.assertIn('scheme = "csk"', text)

    def test_the_ratio_is_the_worker_cpu_per_query_by_round(self):
        def run(us):
            return {"qps": 1000, "worker_us_per_query": us, "process_us_per_query": us * 2,
                    "serials": 0, "loadavg_1m": 1.0}
        text = sign_refresh.summary({"idle": [run(2.0), run(4.0)],
                                     "refreshing": [run(2.2), run(4.0)]})
        self.assertIn("refreshing / idle: 1.050 (rounds 1.100, 1.000", text)


if __name__ == "__main__":
    unittest.main()
