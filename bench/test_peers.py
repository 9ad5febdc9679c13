"""Checks of the harness's process handling (`python3 -m unittest discover -s bench`)."""

import os
import sys
import tempfile
import time
import unittest

import peers

# A "server" that moves itself to CPU 0 after it starts, as Knot DNS does with a thread.
WANDERER = "import os, time; os.sched_setaffinity(0, {0}); print('moved', flush=True); time.sleep(30)"


@unittest.skipIf(len(os.sched_getaffinity(0)) < 2 or not {0, 1} <= os.sched_getaffinity(0),
                 "needs CPUs 0 and 1")
class KeepOnCpuTest(unittest.TestCase):
    def start(self, cpu):
        work = tempfile.mkdtemp(prefix="tern-peers-test-")
        server = peers.Server("wanderer", [], 0, work, [sys.executable, "-c", WANDERER], cpu)
        self.addCleanup(server.stop)
        deadline = time.monotonic() + 10
        while os.sched_getaffinity(server.proc.pid) != {0}:
            self.assertLess(time.monotonic(), deadline, "the child never moved itself")
            time.sleep(0.01)
        return server

    def test_a_thread_that_left_the_server_cpu_is_moved_back(self):
        server = self.start(cpu=1)
        self.assertEqual(server.keep_on_cpu(), 1)
        self.assertEqual(os.sched_getaffinity(server.proc.pid), {1})
        self.assertEqual(server.keep_on_cpu(), 0)  # nothing left to move

    def test_an_unpinned_server_is_left_alone(self):
        server = self.start(cpu=None)
        self.assertEqual(server.keep_on_cpu(), 0)
        self.assertEqual(os.sched_getaffinity(server.proc.pid), {0})

    def test_context_switches_and_cpu_split_are_counted(self):
        server = self.start(cpu=1)
        user, system = server.cpu_split()
        self.assertGreaterEqual(user, 0)
        self.assertGreaterEqual(system, 0)
        self.assertAlmostEqual(server.cpu_seconds(), user + system)
        self.assertGreater(server.context_switches(), 0)


if __name__ == "__main__":
    unittest.main()
