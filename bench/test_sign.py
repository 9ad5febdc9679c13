"""Checks of the signing benchmark's pieces (`python3 -m unittest discover -s bench -p 'test_*.py'`)."""

import os
import tempfile
import unittest

import dns.flags
import dns.message
import dns.rrset

import sign


class DataZoneTest(unittest.TestCase):
    def test_every_name_holds_data_and_the_same_seed_gives_the_same_zone(self):
        text = "".join(sign.data_zone_lines(500))
        self.assertEqual(text, "".join(sign.data_zone_lines(500)))
        records = [l.split() for l in text.splitlines() if l and not l.startswith("$")]
        owners = {r[0] for r in records if r[0] != sign.DATA_ORIGIN}
        self.assertEqual(len(owners), 500)
        with_a = {r[0] for r in records if r[3] == "A"}
        self.assertEqual(owners, with_a, "an A record at every name")
        aaaa = sum(1 for r in records if r[3] == "AAAA")
        self.assertTrue(100 < aaaa < 200, f"about 30% with AAAA, got {aaaa}")

    def test_the_cached_zone_is_made_once(self):
        with tempfile.TemporaryDirectory() as work:
            path = sign.prepare_data_zone(50, work)
            made = os.path.getmtime(path)
            self.assertEqual(sign.prepare_data_zone(50, work), path)
            self.assertEqual(os.path.getmtime(path), made)


class SignersTest(unittest.TestCase):
    def test_both_by_default_tern_first_or_one_alone(self):
        self.assertEqual(sign.parse_args([]).signers, "tern,knot")
        self.assertEqual([n for n, _ in sign.signers("knot,tern")], ["tern", "knot"])
        self.assertEqual(sign.signers("tern"), [("tern", sign.run_tern)])
        self.assertEqual([n for n, _ in sign.signers("knot,ternd,tern")], ["tern", "ternd", "knot"])
        with self.assertRaises(ValueError):
            sign.signers("tern,bind")


class TerndConfTest(unittest.TestCase):
    def conf(self, denial):
        zone = sign.SignZone("z", "tld.", "/zones/tld", denial)
        return sign.ternd_conf(zone, 5300, "/w", "/w/zone.txt")

    def test_the_copy_signed_from_a_csk_policy(self):
        conf = self.conf("nsec")
        for line in ('listen = ["127.0.0.1:5300"]', 'storage = "/w/data"', 'name = "tld."',
                     'file = "/w/zone.txt"', 'dnssec-policy = "bench"', 'scheme = "csk"',
                     'denial = "nsec"'):
            self.assertIn(line, conf)
        self.assertNotIn("/zones/tld", conf, "the server writes its file: never the original")

    def test_nsec3_opt_out(self):
        conf = self.conf("nsec3-optout")
        self.assertIn('denial = "nsec3"\nnsec3-opt-out = true', conf)


class KnotConfTest(unittest.TestCase):
    def conf(self, denial):
        zone = sign.SignZone("z", "tld.", "/zones/tld", denial)
        return sign.knot_conf(zone, 5300, "/w", 2)

    def test_policy_is_a_csk_ecdsa_p256_on_the_threads_given(self):
        conf = self.conf("nsec")
        for line in ("algorithm: ecdsap256sha256", "single-type-signing: on",
                     "signing-threads: 2", "dnssec-signing: on", "dnssec-policy: bench",
                     "nsec3: off", "listen: 127.0.0.1@5300", "file: /zones/tld"):
            self.assertIn(line, conf)

    def test_nsec3_opt_out_without_salt_or_iterations(self):
        conf = self.conf("nsec3-optout")
        for line in ("nsec3: on", "nsec3-opt-out: on", "nsec3-iterations: 0",
                     "nsec3-salt-length: 0"):
            self.assertIn(line, conf)


class SoaSignedTest(unittest.TestCase):
    def response(self, *rrsets, aa=True):
        query = dns.message.make_query("tld.", "SOA", want_dnssec=True)
        response = dns.message.make_response(query)
        if aa:
            response.flags |= dns.flags.AA
        response.answer = [dns.rrset.from_text(*r) for r in rrsets]
        return response

    SOA = ("tld.", 300, "IN", "SOA", "ns. h. 1 2 3 4 5")
    RRSIG = ("tld.", 300, "IN", "RRSIG",
             "SOA 13 1 300 20450101000000 20260101000000 1 tld. AAAA")

    def test_only_an_authoritative_soa_with_its_rrsig_counts(self):
        self.assertTrue(sign.soa_signed(self.response(self.SOA, self.RRSIG), "tld."))
        self.assertFalse(sign.soa_signed(self.response(self.SOA), "tld."))
        self.assertFalse(sign.soa_signed(self.response(self.SOA, self.RRSIG, aa=False), "tld."))
        self.assertFalse(sign.soa_signed(self.response(self.SOA, self.RRSIG), "other."))


class FiguresTest(unittest.TestCase):
    def test_log_times_take_the_first_start_and_end(self):
        lines = [(10.5, "info: [tld.] DNSSEC, signing started"),
                 (44.0, "info: [tld.] DNSSEC, successfully signed, serial 2"),
                 (50.0, "info: [tld.] DNSSEC, signing started")]
        self.assertEqual(sign.log_times(lines, 10.0), (0.5, 34.0))
        self.assertEqual(sign.log_times(lines[:1], 10.0), (0.5, None))

    def test_summary_gives_medians_and_ratios(self):
        tern = {"time_s": 10.0, "cpu_s": 15.0, "pss_kib": 1024 * 400, "peak_rss_kib": 1024 * 900,
                "signatures": 800_000, "sign_cpu_s": 20.0, "sign_s": 10.0,
                "raw_sig_cpu_s": 50_000, "raw_sig_s": 100_000}
        knot = {"time_s": 40.0, "cpu_s": 50.0, "pss_kib": 1024 * 1000, "peak_rss_kib": 1024 * 1200,
                "sign_start_s": 2.0, "sign_end_s": 30.0}
        slower = dict(knot, time_s=60.0, cpu_s=70.0, sign_end_s=40.0)
        [row] = sign.summary([("deleg", "tern", tern), ("deleg", "knot", knot),
                              ("deleg", "knot", slower)], threads=2)
        self.assertEqual(row["knot_s"], 50.0)
        self.assertAlmostEqual(row["time_ratio"], 0.2)
        self.assertAlmostEqual(row["cpu_ratio"], 0.25)
        self.assertAlmostEqual(row["pss_ratio"], 0.4)
        self.assertEqual(row["knot_sign_s"], 33.0)
        self.assertEqual(row["sig_per_cpu_s"], 40_000)
        self.assertAlmostEqual(row["share_cpu"], 0.8)
        self.assertAlmostEqual(row["share_wall"], 0.8)
        self.assertIsNone(row["ternd_pss_mib"])

    def test_the_server_figures_against_knot_dns(self):
        ternd = {"time_s": 20.0, "pss_kib": 1024 * 450, "peak_rss_kib": 1024 * 1100}
        knot = {"time_s": 40.0, "pss_kib": 1024 * 1000}
        [row] = sign.summary([("data", "ternd", ternd), ("data", "knot", knot)], threads=2)
        self.assertEqual((row["ternd_s"], row["ternd_pss_mib"]), (20.0, 450))
        self.assertAlmostEqual(row["ternd_pss_ratio"], 0.45)

    def test_missing_figures_give_no_ratio(self):
        [row] = sign.summary([("data", "tern", {"time_s": 1.0})], threads=2)
        self.assertIsNone(row["time_ratio"])
        self.assertIsNone(row["share_cpu"])
        self.assertEqual(sign.fmt(None, ".2f"), "–")


if __name__ == "__main__":
    unittest.main()
