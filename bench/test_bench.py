"""Checks of the harness's per-query figures (`python3 -m unittest discover -s bench`)."""

import os
import unittest

import bench


class CommonArgsTest(unittest.TestCase):
    def test_a_relative_work_directory_is_made_absolute(self):
        p = bench.argparse.ArgumentParser()
        bench.add_common_args(p)
        work = p.parse_args(["--work", "bench/out"]).work
        self.assertTrue(os.path.isabs(work))
        self.assertEqual(work, os.path.join(os.getcwd(), "bench", "out"))


class PerQueryUsageTest(unittest.TestCase):
    def test_cpu_split_and_queries_per_switch(self):
        # 0.3 s user and 0.9 s system over 200,000 answers and 25,000 switches.
        usage = bench.per_query_usage((1.0, 2.0, 5_000), (1.3, 2.9, 30_000), 200_000)
        self.assertAlmostEqual(usage["cpu_us"], 6.0)
        self.assertAlmostEqual(usage["user_us"], 1.5)
        self.assertAlmostEqual(usage["sys_us"], 4.5)
        self.assertAlmostEqual(usage["per_switch"], 8.0)

    def test_nothing_answered_gives_no_cpu_figure_and_no_switch_no_ratio(self):
        self.assertEqual(bench.per_query_usage((0, 0, 0), (1.0, 1.0, 10), 0),
                         {"cpu_us": None, "user_us": None, "sys_us": None, "per_switch": 0.0})
        self.assertIsNone(bench.per_query_usage((0, 0, 7), (1.0, 1.0, 7), 100)["per_switch"])


if __name__ == "__main__":
    unittest.main()
