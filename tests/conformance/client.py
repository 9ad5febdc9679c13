"""Sends the conformance queries to one server and collects the raw answers.

UDP: one socket, one query at a time, answers matched by message ID, one retry after a
timeout (a server may also drop a query on purpose: that is recorded as no answer).
TCP: one persistent connection carrying the queries one after another (RFC 7766 §6.2.1),
reopened when the server closes it. Every wait is bounded by a timeout.
"""

import socket
import struct
import time


class Client:
    """Asks one server on 127.0.0.1:`port`."""

    def __init__(self, port, timeout=0.5, retries=1):
        self.addr = ("127.0.0.1", port)
        self.timeout, self.retries = timeout, retries
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.tcp = None

    def ask(self, query, qid):
        """The raw answer to `query` (sent with message ID `qid`), or None."""
        wire = query.wire(qid)
        if query.transport == "tcp":
            return self._ask_tcp(wire)
        return self._ask_udp(wire, qid)

    def _ask_udp(self, wire, qid):
        for _ in range(1 + self.retries):
            self.udp.sendto(wire, self.addr)
            deadline = time.monotonic() + self.timeout
            while (left := deadline - time.monotonic()) > 0:
                self.udp.settimeout(left)
                try:
                    data = self.udp.recv(65535)
                except socket.timeout:
                    break
                if len(data) >= 2 and struct.unpack("!H", data[:2])[0] == qid:
                    return data
        return None

    def _ask_tcp(self, wire):
        for _ in range(2):  # a second try on a fresh connection if the old one was closed
            try:
                if self.tcp is None:
                    self.tcp = socket.create_connection(self.addr, timeout=self.timeout * 4)
                self.tcp.sendall(struct.pack("!H", len(wire)) + wire)
                length = struct.unpack("!H", self._recv_exact(2))[0]
                return self._recv_exact(length)
            except (OSError, EOFError):
                self._close_tcp()
        return None

    def _recv_exact(self, size):
        data = b""
        while len(data) < size:
            chunk = self.tcp.recv(size - len(data))
            if not chunk:
                raise EOFError("connection closed")
            data += chunk
        return data

    def _close_tcp(self):
        if self.tcp is not None:
            self.tcp.close()
            self.tcp = None

    def close(self):
        self._close_tcp()
        self.udp.close()


def ask_all(port, queries):
    """Raw answers to every query, in order."""
    client = Client(port)
    try:
        return [client.ask(q, i & 0xFFFF) for i, q in enumerate(queries)]
    finally:
        client.close()
