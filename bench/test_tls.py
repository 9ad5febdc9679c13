"""Checks of the encrypted-transport benchmark's figures and configurations
(`python3 -m unittest discover -s bench -p 'test_*.py'`)."""

import contextlib
import io
import os
import tempfile
import unittest

import peers
import tls


def rec(server, mode, rnd, **fields):
    return {"server": server, "mode": mode, "round": rnd, **fields}


class RatioTest(unittest.TestCase):
    def records(self):
        # Tern DoT 3.0 then 5.0 µs, NSD 10.0 and 8.0, BIND 12.0 and 20.0; Tern TCP 2.0, 4.0.
        rows = []
        for rnd, (tern, nsd, bind, tcp) in enumerate([(3.0, 10.0, 12.0, 2.0), (5.0, 8.0, 20.0, 4.0)]):
            rows += [rec("tern", "dot", rnd, cpu_us=tern, rate=100.0 * (rnd + 1)),
                     rec("nsd", "dot", rnd, cpu_us=nsd, rate=50.0),
                     rec("bind", "dot", rnd, cpu_us=bind, rate=80.0),
                     rec("tern", "tcp", rnd, cpu_us=tcp)]
        return rows

    def test_the_best_peer_is_chosen_by_its_median(self):
        rows = self.records()
        self.assertEqual(tls.best_peer(rows, ["nsd", "bind"], "dot", "cpu_us"), "nsd")
        self.assertEqual(tls.best_peer(rows, ["nsd", "bind"], "dot", "rate", lower=False), "bind")
        self.assertIsNone(tls.best_peer(rows, ["knot"], "dot", "cpu_us"))

    def test_ratio_of_medians_and_round_by_round(self):
        med, rounds = tls.ratio(self.records(), ("tern", "dot"), ("nsd", "dot"), "cpu_us")
        self.assertAlmostEqual(med, 4.0 / 9.0)
        self.assertEqual([round(x, 3) for x in rounds], [0.3, 0.625])
        med, rounds = tls.ratio(self.records(), ("tern", "dot"), ("tern", "tcp"), "cpu_us")
        self.assertAlmostEqual(med, 4.0 / 3.0)
        self.assertEqual(rounds, [1.5, 1.25])

    def test_a_round_missing_on_one_side_is_left_out(self):
        rows = self.records() + [rec("tern", "dot", 2, cpu_us=9.0)]
        _, rounds = tls.ratio(rows, ("tern", "dot"), ("nsd", "dot"), "cpu_us")
        self.assertEqual(len(rounds), 2)
        self.assertIn("not measured", tls.ratio_line("x", tls.ratio(rows, ("a", "dot"), ("b", "dot"), "cpu_us"), "≤ 1"))

    def test_targets_name_the_best_peer(self):
        lines = tls.persistent_targets(self.records(), ["tern", "nsd", "bind"])
        self.assertEqual(len(lines), 2, lines)  # no paced modes measured: no third line
        self.assertIn("÷ nsd's (the best peer): **0.44** (rounds 0.30, 0.62); target ≤ 0.5", lines[0])
        self.assertIn("÷ Tern plain TCP, each as fast as dnsperf sends: **1.33** "
                      "(rounds 1.50, 1.25); target ≤ 1.5", lines[1])

    def test_paced_modes_are_compared_at_their_rate(self):
        rows = self.records() + [
            rec("tern", "dot-paced", 0, cpu_us=6.0, rate=79_990.0),
            rec("tern", "tcp-paced", 0, cpu_us=5.0, rate=80_000.0),
            rec("tern", "dot-paced", 1, cpu_us=7.0, rate=80_010.0),
            rec("tern", "tcp-paced", 1, cpu_us=7.0, rate=80_000.0)]
        lines = tls.persistent_targets(rows, ["tern", "nsd", "bind"])
        self.assertIn("both paced at 80,000 q/s: **1.08** (rounds 1.20, 1.00); target ≤ 1.5",
                      lines[2])


class PacedShortfallTest(unittest.TestCase):
    def test_a_round_whose_client_fell_behind_is_left_out_and_named(self):
        rows = [rec("tern", "dot", 0, rate=200_000.0, cpu_us=4.0)]
        for rnd, dot_rate in enumerate([79_990.0, 43_330.0, 80_000.0]):
            rows += [rec("tern", "dot-paced", rnd, rate=dot_rate, offered=80_000, cpu_us=6.0),
                     rec("tern", "tcp-paced", rnd, rate=80_000.0, offered=80_000, cpu_us=6.5)]
        kept, notes = tls.paced_shortfalls(rows)
        self.assertEqual(sorted({r["round"] for r in kept if r["mode"] == "tcp-paced"}), [0, 2])
        self.assertIn(rows[0], kept)  # unpaced modes are kept whatever their round
        self.assertEqual(notes, ["* Paced rounds left out: 2 (dot-paced reached 43,330 q/s)"])

    def test_nothing_left_out_when_every_round_kept_its_rate(self):
        rows = [rec("tern", "tcp-paced", 0, rate=79_000.0, offered=80_000, cpu_us=1.0)]
        self.assertEqual(tls.paced_shortfalls(rows), (rows, []))


class FreshTargetsTest(unittest.TestCase):
    def test_capacity_is_compared_and_the_measured_rate_shown_apart(self):
        rows = []
        for rnd, (tern, nsd, bind) in enumerate([(250.0, 500.0, 600.0), (200.0, 600.0, 500.0)]):
            for kind, cpu, rate in (("tern", tern, 1500.0), ("nsd", nsd, 900.0), ("bind", bind, 1000.0)):
                rows.append(rec(kind, "tls-new", rnd, cpu_us=cpu, capacity=1e6 / cpu, rate=rate))
        lines = tls.fresh_targets(rows, ["tern", "nsd", "bind"])
        # Capacities: Tern 4,000 and 5,000; NSD 2,000 and 1,667; BIND 1,667 and 2,000.
        self.assertEqual(len(lines), 2, lines)
        self.assertIn("tls-new: Tern capacity ÷ nsd's (the best peer): **2.45** "
                      "(rounds 2.00, 3.00); target ≥ 2", lines[0])
        self.assertIn("Tern measured connections/s ÷ bind's: **1.50**", lines[1])
        self.assertEqual(tls.fresh_targets(rows, ["tern"]), [])


class ArgsTest(unittest.TestCase):
    def test_parts_select_the_modes(self):
        self.assertEqual(tls.query_modes(tls.parse_args(["--only", "fresh"])),
                         ["tcp-new", "tls-new", "tls-resume"])
        self.assertEqual(tls.query_modes(tls.parse_args(["--only", "persistent", "--edns"])),
                         ["tcp", "dot", "dot-edns", "dot-paced", "tcp-paced"])
        self.assertEqual(tls.query_modes(tls.parse_args(["--only", "persistent", "--paced", "0"])),
                         ["tcp", "dot"])
        self.assertEqual(tls.query_modes(tls.parse_args(["--only", "axfr"])), [])

    def test_an_unknown_part_is_refused(self):
        with self.assertRaises(SystemExit), contextlib.redirect_stderr(io.StringIO()) as err:
            tls.parse_args(["--only", "doq"])
        self.assertIn("unknown parts ['doq']", err.getvalue())


class TlsConfigurationTest(unittest.TestCase):
    """The DoT listener reaches each server's configuration."""

    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="tern-tls-test-")
        self.tls = peers.Tls(8853, "/c/server.pem", "/c/server.key")
        self.zones = [peers.Zone("tld.", "/z/zone.txt")]

    def config(self, kind, name):
        peers.command(kind, self.zones, 5353, self.work, tern_bin="ternd", tls=self.tls)
        with open(os.path.join(self.work, name)) as f:
            return f.read()

    def test_tern_gets_a_tls_table(self):
        text = self.config("tern", "ternd.toml")
        self.assertIn('[tls]\nlisten = ["127.0.0.1:8853"]\ncertificate = "/c/server.pem"\n'
                      'key = "/c/server.key"\n', text)
        self.assertIn('listen = ["127.0.0.1:5353"]', text)

    def test_nsd_listens_on_the_tls_port(self):
        text = self.config("nsd", "nsd.conf")
        for line in ("ip-address: 127.0.0.1@5353", "ip-address: 127.0.0.1@8853",
                     "tls-port: 8853", 'tls-service-pem: "/c/server.pem"',
                     'tls-service-key: "/c/server.key"'):
            self.assertIn(line, text)

    def test_bind_names_its_tls_listener(self):
        text = self.config("bind", "named.conf")
        self.assertIn('tls bench-tls { cert-file "/c/server.pem"; key-file "/c/server.key"; };', text)
        self.assertIn("listen-on port 8853 tls bench-tls { 127.0.0.1; };", text)

    def test_knot_is_refused(self):
        with self.assertRaises(ValueError):
            peers.command("knot", self.zones, 5353, self.work, tls=self.tls)

    def test_without_tls_tern_keeps_its_quick_mode(self):
        argv = peers.command("tern", self.zones, 5353, self.work, tern_bin="ternd")
        self.assertIn("--listen", argv)


if __name__ == "__main__":
    unittest.main()
