"""Checks of `tools/qload` against a loopback responder (`python3 -m unittest discover
-s bench`)."""

import os
import socket
import subprocess
import tempfile
import threading
import time
import unittest

import datasets
import update_ab


class Responder:
    """Answers every message on 127.0.0.1 with QR set and its ID, keeping what came."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.seen, self.times, self.running = [], [], True
        self.thread = threading.Thread(target=self._serve)
        self.thread.start()

    def _serve(self):
        while self.running:
            try:
                data, peer = self.sock.recvfrom(2048)
            except socket.timeout:
                continue
            self.seen.append(data)
            self.times.append(time.monotonic())  # CLOCK_MONOTONIC, as qload's
            self.sock.sendto(data[:2] + bytes([data[2] | 0x80, data[3] & 0xF0]) + data[4:], peer)

    def close(self):
        self.running = False
        self.thread.join()
        self.sock.close()


class QloadTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.TemporaryDirectory()
        cls.qload = datasets.build_tools(cls.dir.name)["qload"]

    @classmethod
    def tearDownClass(cls):
        cls.dir.cleanup()

    def write(self, name, text):
        path = os.path.join(self.dir.name, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def run_qload(self, *argv):
        out = subprocess.run([self.qload, *argv], capture_output=True, text=True, timeout=30)
        return out.returncode, out.stdout, out.stderr

    def test_paced_updates_are_rfc_2136_messages_and_all_answered(self):
        updates = self.write("u.txt", "tld\nadd w0.tld. 300 A 10.0.0.1\nsend\n"
                                      "tld\ndelete w0.tld. A 10.0.0.1\nsend\n")
        responder = Responder()
        try:
            code, out, err = self.run_qload("-u", "-Q", "200", str(responder.port), "1",
                                            updates, "8")
        finally:
            responder.close()
        self.assertEqual(code, 0, err)
        figures = dict(field.split("=") for field in out.split())
        self.assertEqual(figures["lost"], "0")
        self.assertEqual(figures["answered"], figures["noerror"])
        self.assertTrue(150 <= int(figures["sent"]) <= 210, out)  # 200 a second for 1 s
        add = responder.seen[0]
        # UPDATE; one zone record (tld. SOA IN) and one update record
        self.assertEqual(add[2:12], bytes([0x28, 0, 0, 1, 0, 0, 0, 1, 0, 0]))
        self.assertEqual(add[12:21], b"\x03tld\x00\x00\x06\x00\x01")
        owner = b"\x02w0\x03tld\x00"
        # add: class IN, TTL 300; delete: class NONE, TTL 0 (RFC 2136 2.5.1, 2.5.4)
        self.assertEqual(add[21:], owner + bytes([0, 1, 0, 1, 0, 0, 1, 44, 0, 4, 10, 0, 0, 1]))
        delete = responder.seen[1]
        self.assertEqual(delete[21:], owner + bytes([0, 1, 0, 254, 0, 0, 0, 0, 0, 4, 10, 0, 0, 1]))

    def test_queries_keep_their_window_full(self):
        queries = self.write("q.txt", "; a comment\nexample.tld A\n\nwww.example.tld AAAA\n")
        responder = Responder()
        try:
            code, out, err = self.run_qload(str(responder.port), "1", queries, "4")
        finally:
            responder.close()
        self.assertEqual(code, 0, err)
        figures = dict(field.split("=") for field in out.split())
        self.assertGreater(int(figures["answered"]), 100)
        self.assertEqual(figures["lost"], "0")
        self.assertEqual(responder.seen[0][12:], b"\x07example\x03tld\x00\x00\x01\x00\x01")

    def test_alternating_sends_only_in_first_halves_and_counts_answers_per_bucket(self):
        updates = self.write("a.txt", "tld\nadd w0.tld. 300 A 10.0.0.1\nsend\n")
        responder = Responder()
        try:
            code, out, err = self.run_qload("-u", "-Q", "500", "-O", "0.4", "-B", "20",
                                            str(responder.port), "2", updates, "8")
        finally:
            responder.close()
        self.assertEqual(code, 0, err)
        got = update_ab.parse_qload(out)
        # 500 a second of the sending halves: about 500 in 2 s
        self.assertTrue(400 <= got["sent"] <= 560, out)
        late = [t % 0.4 for t in responder.times if 0.25 < t % 0.4 < 0.39]
        self.assertEqual(late, [], "sent in a pause")
        self.assertEqual(sum(got["counts"]), got["answered"])
        for i, count in enumerate(got["counts"]):
            phase = (got["first"] + i) * 0.02 % 0.4
            if 0.27 <= phase <= 0.37:
                self.assertEqual(count, 0, f"answers in the pause, bucket {i}")

    def test_halves_are_told_apart_by_the_monotonic_clock(self):
        # 50 ms buckets from t = 100 s: 4 s of 2 s cycles, updating in the first second
        counts = [10 if (i * 50 // 1000) % 2 == 0 else 20 for i in range(80)]
        busy, quiet = update_ab.split_halves({"first": 2000, "counts": counts}, 2.0)
        # the run's first and last second are left out, and SETTLE of each half
        self.assertEqual(set(busy), {10})
        self.assertEqual(set(quiet), {20})
        self.assertEqual(len(busy), len(quiet))
        self.assertEqual(len(busy), int((1 - update_ab.SETTLE) * 1000 / update_ab.BUCKET_MS))

    def test_a_bad_line_names_its_place_and_what_was_expected(self):
        updates = self.write("bad.txt", "tld\nadd w0.tld. 300 TXT hello\nsend\n")
        code, _, err = self.run_qload("-u", "1", "1", updates)
        self.assertEqual(code, 2)
        self.assertIn("bad.txt:2: add NAME TTL A ADDRESS", err)
        queries = self.write("badq.txt", "example.tld\n")
        code, _, err = self.run_qload("1", "1", queries)
        self.assertEqual(code, 2)
        self.assertIn("badq.txt:1: a query: NAME TYPE", err)


if __name__ == "__main__":
    unittest.main()
