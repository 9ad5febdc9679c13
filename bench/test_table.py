"""Checks of the harness's report (`python3 -m unittest discover -s bench -p 'test_*.py'`)."""

import unittest

import table


def rec(server, mode, repeat, qps, cpu_us):
    return {"server": server, "size": 100, "zone": "unsigned", "repeat": repeat,
            "mode": mode, "qps": qps, "cpu_us": cpu_us, "lost": 0.0, "rcodes": None}


class TargetsTest(unittest.TestCase):
    def records(self):
        rows = []
        # Two rounds; Tern 4.0 then 6.0 µs, Knot 5.0 and 5.0, NSD 6.0 and 8.0, floor 4.0.
        for i, (tern, knot, nsd) in enumerate([(4.0, 5.0, 6.0), (6.0, 5.0, 8.0)]):
            rows += [rec("tern", "udp", i, 100.0, tern), rec("knot", "udp", i, 90.0, knot),
                     rec("nsd", "udp", i, 110.0, nsd), rec("floor", "udp", i, 120.0, 4.0)]
        return rows

    def row(self, lines, what):
        found = [line for line in lines if line.startswith(f"| {what} |")]
        self.assertEqual(len(found), 1, lines)
        return [cell.strip() for cell in found[0].strip("|").split("|")]

    def test_ratios_from_medians_and_per_round(self):
        lines = table.targets(self.records(), 100)
        # Medians: Tern 5.0, Knot 5.0 -> 1.00; rounds 0.80 and 1.20.
        self.assertEqual(self.row(lines, "UDP DO=0, CPU × Knot DNS")[2:],
                         ["1.00 (**not met**)", "0.80", "1.20"])
        # NSD medians 7.0: 5/7 = 0.71 met; rounds 4/6, 6/8.
        self.assertEqual(self.row(lines, "UDP DO=0, CPU × NSD")[2:],
                         ["0.71 (met)", "0.67", "0.75"])
        self.assertEqual(self.row(lines, "UDP DO=0, CPU × floor")[2:],
                         ["1.25 (**not met**)", "1.00", "1.50"])

    def test_best_peer_is_the_highest_qps_and_the_floor_is_no_peer(self):
        lines = table.targets(self.records(), 100)
        # The best peer's qps is NSD's 110 (the floor's 120 does not count): 100/110.
        self.assertEqual(self.row(lines, "UDP DO=0, qps × best peer")[2],
                         "0.91 (**not met**)")
        # Modes nobody measured are left out.
        self.assertFalse(any("DO=1" in line for line in lines))

    def test_throughput_splits_cpu_and_counts_queries_per_switch(self):
        rows = self.records()
        for r in rows:
            r.update(user_us=r["cpu_us"] / 4, sys_us=r["cpu_us"] * 3 / 4, per_switch=7.0)
        rows[0].pop("per_switch")  # a round without the count (an older record) is left out
        lines = table.throughput(rows, 100)
        # Tern's rounds: 4.0 = 1.0 + 3.0 and 6.0 = 1.5 + 4.5; medians 1.25 + 3.75.
        tern = self.row(lines, "UDP, DO=0 | tern")
        self.assertEqual(tern[4:7], ["5.00", "1.25 + 3.75", "7.0"])

    def test_throughput_of_records_without_the_split(self):
        tern = self.row(table.throughput(self.records(), 100), "UDP, DO=0 | tern")
        self.assertEqual(tern[4:7], ["5.00", "—", "—"])

    def test_no_rows_without_tern(self):
        rows = [r for r in self.records() if r["server"] != "tern"]
        self.assertEqual(table.targets(rows, 100), [])


if __name__ == "__main__":
    unittest.main()
