"""A scripted primary for fault tests: answers SOA queries (UDP) and AXFR/IXFR (TCP)
for one zone, signed with the run's key, and misbehaves on request.

Modes: `good` (the zone at the current serial), `cut` (half the transfer, then the
connection closes), `broken` (a message of garbage), `lower` (the SOA query says the
serial rose, the transfer brings a lower one), `big` (a zone larger than the secondary's
limit), `badsig` (answers signed with the wrong secret).
"""

import socket
import struct
import threading

import dns.message
import dns.name
import dns.rdatatype
import dns.rrset
import dns.tsigkeyring
import dns.zone

from servers import WRONG_SECRET, peers


class Primary:
    def __init__(self, origin, keyring, keyname):
        self.origin = dns.name.from_text(origin)
        self.keyring, self.keyname = keyring, dns.name.from_text(keyname)
        self.wrong = dns.tsigkeyring.from_text({keyname: ("hmac-sha256", WRONG_SECRET)})
        self.mode, self.serial, self.records = "good", 1, []
        self.lock = threading.Lock()
        self.port = peers.free_port()
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", self.port))
        self.tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.tcp.bind(("127.0.0.1", self.port))
        self.tcp.listen(16)
        self.closed = False
        for target in (self._serve_udp, self._serve_tcp):
            threading.Thread(target=target, daemon=True).start()

    def set_zone(self, text):
        zone = dns.zone.from_text(text, origin=self.origin, relativize=False)
        with self.lock:
            self.records = [
                dns.rrset.from_rdata_list(name, rdataset.ttl, list(rdataset))
                for name, rdataset in zone.iterate_rdatasets()
            ]
            self.serial = zone.get_soa().serial

    def set_mode(self, mode, serial):
        with self.lock:
            self.mode, self.serial = mode, serial

    def close(self):
        self.closed = True
        for sock in (self.udp, self.tcp):
            try:
                sock.close()
            except OSError:
                pass

    def _soa(self, serial):
        soa = next(r for r in self.records if r.rdtype == dns.rdatatype.SOA)
        rrset = dns.rrset.from_rdata(soa.name, soa.ttl, soa[0].replace(serial=serial))
        return rrset

    def _response(self, query):
        response = dns.message.make_response(query)
        if self.mode == "badsig":
            response.use_tsig(self.wrong, keyname=self.keyname, original_id=query.id)
            response.request_mac = query.mac
        return response

    def _serve_udp(self):
        while not self.closed:
            try:
                wire, addr = self.udp.recvfrom(65535)
                query = dns.message.from_wire(wire, keyring=self.keyring)
                with self.lock:
                    response = self._response(query)
                    response.answer.append(self._soa(self.serial))
                    self.udp.sendto(response.to_wire(), addr)
            except OSError:
                return
            except Exception:  # a query we cannot read: no answer
                continue

    def _serve_tcp(self):
        while not self.closed:
            try:
                conn, _ = self.tcp.accept()
            except OSError:
                return
            threading.Thread(target=self._transfer, args=(conn,), daemon=True).start()

    def _transfer(self, conn):
        with conn:
            try:
                length = struct.unpack("!H", _read(conn, 2))[0]
                query = dns.message.from_wire(_read(conn, length), keyring=self.keyring)
                with self.lock:
                    messages = self._messages(query)
                for wire in messages:
                    if wire is None:  # `cut`: stop here
                        return
                    conn.sendall(struct.pack("!H", len(wire)) + wire)
            except Exception:
                return

    def _messages(self, query):
        """The transfer's messages in wire form, as the mode wants them."""
        if self.mode == "broken":
            return [b"\x12\x34\x84\x00\x00\x01\x00\x05garbage"]
        serial = 0 if self.mode == "lower" else self.serial
        body = [r for r in self.records if r.rdtype != dns.rdatatype.SOA]
        if self.mode == "big":
            body = body * 6
        records = [self._soa(serial)] + body + [self._soa(serial)]
        chunks = [records[i:i + 200] for i in range(0, len(records), 200)]
        wires, ctx = [], None
        for chunk in chunks:
            response = self._response(query)
            response.answer = chunk
            wire = response.to_wire(multi=True, tsig_ctx=ctx)
            ctx = response.tsig_ctx
            wires.append(wire)
        if self.mode == "cut":
            return wires[: len(wires) // 2] + [None]
        return wires


def _read(conn, n):
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data
