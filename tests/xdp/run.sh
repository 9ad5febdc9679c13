#!/usr/bin/env bash
# The AF_XDP path of ternd (issue 30), end to end, in two private network namespaces
# joined by a veth pair that this script creates and removes:
#   * UDP over IPv4 and IPv6 answered through XDP (the server's stop line counts them),
#     with correct UDP checksums (the client's kernel checks them: the answers come from
#     AF_XDP without offload, so a wrong sum would be dropped and the query time out);
#   * an answer larger than the MTU allows is truncated (TC), never fragmented;
#   * cookies and rate limiting apply on the XDP path (a burst gets TC=1 slips);
#   * TCP still answered by the socket path, ping (ICMP, ICMPv6, ARP, ND) untouched;
#   * `ternctl status` and `/metrics` count the XDP path's queries apart from UDP's;
#   * the program detached after SIGTERM, and after SIGKILL (the BPF link dies with the
#     process), and attached again by a start at once, five times over (generic mode).
# Skips (exit 0, saying why) without root, namespaces, or XDP in the kernel.
#   tests/xdp/run.sh                 TERND=target/debug/ternd tests/xdp/run.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
TERND=${TERND:-$root/target/release/ternd}

skip() { echo "SKIP tests/xdp: $*"; exit 0; }
fail() { echo "FAIL tests/xdp: $*" >&2; [[ -f ${log:-} ]] && tail -20 "$log" >&2; exit 1; }

[[ $(id -u) -eq 0 ]] || skip "needs root (network namespaces, XDP)"
for tool in ip kdig ping; do
  command -v "$tool" >/dev/null || skip "no $tool"
done
[[ -x $TERND ]] || fail "no ternd at $TERND (build it, or set TERND)"

srv=ternxdp-s$$ cli=ternxdp-c$$
work=$(mktemp -d)
log=$work/ternd.log
pid=""
cleanup() {
  [[ -n $pid ]] && kill -KILL "$pid" 2>/dev/null || true
  # Whatever else this script started in its namespace (a daemon whose PID was not read).
  for p in $(ip netns pids "$srv" 2>/dev/null); do kill -KILL "$p" 2>/dev/null || true; done
  ip netns del "$srv" 2>/dev/null || true
  ip netns del "$cli" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

ip netns add "$srv" 2>/dev/null || skip "cannot create network namespaces"
ip netns add "$cli"
ip link add xs$$ netns "$srv" type veth peer name xc$$ netns "$cli" ||
  skip "cannot create a veth pair"
in_srv() { ip netns exec "$srv" "$@"; }
in_cli() { ip netns exec "$cli" "$@"; }
in_srv ip link set xs$$ name veth0
in_cli ip link set xc$$ name veth0
in_srv ip addr add 192.0.2.1/24 dev veth0
in_cli ip addr add 192.0.2.2/24 dev veth0
in_srv ip addr add 2001:db8::1/64 dev veth0 nodad
in_cli ip addr add 2001:db8::2/64 dev veth0 nodad
for ns in "$srv" "$cli"; do
  ip -n "$ns" link set lo up
  ip -n "$ns" link set veth0 up
done

big=$(printf 'x%.0s' $(seq 200))
{
  echo '$ORIGIN example.test.'
  echo '$TTL 3600'
  echo '@ SOA ns hostmaster 1 3600 600 86400 300'
  echo '@ NS ns'
  echo 'ns A 192.0.2.1'
  echo 'www A 192.0.2.80'
  echo 'www AAAA 2001:db8::80'
  for i in $(seq 10); do echo "big TXT \"$i$big\""; done
} >"$work/example.test.zone"

config() { # config MODE [SERVER-LINE] [MORE-TABLES]: writes the server's configuration
  cat >"$work/ternd.toml" <<EOF
[server]
listen = ["192.0.2.1:53", "[2001:db8::1]:53"]
udp-workers = 1
tcp-workers = 1
udp-payload-max = 4096
storage = "$work/storage"
${2:-}
[xdp]
interface = "veth0"
mode = "$1"
[[zone]]
name = "example.test"
file = "$work/example.test.zone"
${3:-}
EOF
}

start() { # start MODE [MORE-TABLES]: runs ternd in the server namespace until it serves
  config "$1" "" "${2:-}"
  : >"$log"
  ip netns exec "$srv" "$TERND" -c "$work/ternd.toml" >"$log" 2>&1 &
  pid=$!
  for _ in $(seq 100); do
    grep -q "load done" "$log" && break
    kill -0 "$pid" 2>/dev/null || fail "ternd exited at start"
    sleep 0.1
  done
  grep -q "load done" "$log" || fail "ternd did not start"
  if grep -q "XDP cannot be used" "$log"; then
    why=$(grep "XDP cannot be used" "$log")
    case $why in
      *"needs root"* | *CONFIG_XDP_SOCKETS* | *"not supported"*) skip "$why" ;;
    esac
    fail "XDP did not attach: $why"
  fi
  grep -q "XDP attached.*mode=$1" "$log" || [[ $1 == auto ]] || fail "not attached in $1 mode"
}

stop() { # stop SIGNAL
  kill "-$1" "$pid"
  wait "$pid" 2>/dev/null || true
  pid=""
}

attached() { in_srv ip link show dev veth0 | grep -q "prog/xdp.*tern_dns"; }
# The kernel releases a dead process's link as its descriptors close: allow it a moment.
detached() {
  for _ in $(seq 20); do attached || return 0; sleep 0.05; done
  return 1
}

ask() { in_cli kdig +timeout=2 +retry=0 "$@"; }

echo "== start (auto mode)"
TERNCTL=${TERNCTL:-$(dirname "$TERND")/ternctl}
start auto "query-stats = true
[control]
socket = \"$work/ternd.sock\"
[http]
listen = \"127.0.0.1:9153\""
grep -o "XDP attached.*" "$log"
attached || fail "no XDP program on the interface after start"

echo "== UDP over IPv4 and IPv6 through XDP"
ask @192.0.2.1 www.example.test A | grep -q "www.example.test.*A.*192.0.2.80" ||
  fail "no IPv4 UDP answer"
ask @2001:db8::1 www.example.test AAAA | grep -q "AAAA.*2001:db8::80" ||
  fail "no IPv6 UDP answer"

echo "== cookies on the XDP path (a server cookie comes back)"
ask @192.0.2.1 www.example.test A +cookie | grep -Eq "COOKIE: [0-9A-F]{48}" ||
  fail "no server cookie in an answer through XDP"

echo "== too large: truncated, not fragmented"
out=$(ask @192.0.2.1 big.example.test TXT +bufsize=4096 +ignore)
grep -q "Flags:.* tc" <<<"$out" || fail "a 2 KB answer over a 1500-byte MTU came without TC"
size=$(sed -n 's/^;; Received \([0-9]*\) B.*/\1/p' <<<"$out")
((size <= 1472)) || fail "answer of $size bytes does not fit the MTU"
out=$(ask @2001:db8::1 big.example.test TXT +noedns +ignore)
grep -q "Flags:.* tc" <<<"$out" || fail "no TC for a client without EDNS"

echo "== TCP through the socket path"
ask @192.0.2.1 +tcp big.example.test TXT | grep -q "ANSWER: 10" || fail "no TCP answer"
ask @2001:db8::1 +tcp www.example.test A | grep -q "192.0.2.80" || fail "no TCP answer (IPv6)"

echo "== ping untouched"
in_cli ping -c 1 -W 2 192.0.2.1 >/dev/null || fail "no IPv4 ping"
in_cli ping -6 -c 1 -W 2 2001:db8::1 >/dev/null || fail "no IPv6 ping"

echo "== ternctl status and /metrics: the XDP path counted apart, and per zone"
if [[ -x $TERNCTL ]]; then
  status=$(in_srv "$TERNCTL" --socket "$work/ternd.sock" status) || fail "ternctl status failed"
  grep -Eq "xdp: ([4-9]|[0-9]{2,}) queries" <<<"$status" || fail "ternctl status: $status"
  grep -Eq "udp: 0 queries" <<<"$status" || fail "ternctl status counts XDP as UDP: $status"
else
  echo "no ternctl at $TERNCTL: its status line is not checked"
fi
metrics=$(in_srv curl -sf http://127.0.0.1:9153/metrics) || fail "no /metrics"
grep -Eq '^tern_queries_total\{transport="xdp"\} ([4-9]|[0-9]{2,})$' <<<"$metrics" ||
  fail "no XDP series in /metrics: $(grep tern_queries_total <<<"$metrics")"
grep -q '^tern_queries_total{transport="udp"} 0$' <<<"$metrics" ||
  fail "/metrics counts XDP as UDP: $(grep tern_queries_total <<<"$metrics")"
zone=$(sed -n 's/^tern_zone_responses_total{zone="example.test.",rcode="NOERROR"} \([0-9]*\)$/\1/p' <<<"$metrics")
((${zone:-0} >= 6)) ||
  fail "per-zone counters miss XDP answers (query-stats): $(grep tern_zone_ <<<"$metrics")"

echo "== SIGTERM: counted on the XDP path, detached"
stop TERM
line=$(grep "stopped" "$log") || fail "no stop line"
echo "$line" | grep -o "udp_queries.*"
xdp=$(sed -n 's/.*xdp_queries=\([0-9]*\).*/\1/p' <<<"$line")
udp=$(sed -n 's/.*udp_queries=\([0-9]*\).*/\1/p' <<<"$line")
((xdp >= 4)) || fail "the XDP path counted $xdp queries, expected 4"
((udp == 0)) || fail "the socket path answered $udp UDP queries"
detached || fail "the XDP program is still attached after SIGTERM"

echo "== SIGKILL: nothing left attached; the next start attaches again (generic mode)"
# Five times: a queue stays bound for about 40 ms after the process is gone (the kernel
# frees the old XSKMAP later), which a start at once must wait out, not fail on.
start generic
for round in 1 2 3 4 5; do
  attached || fail "not attached in generic mode (round $round)"
  stop KILL
  detached || fail "the XDP program is still attached after SIGKILL (round $round)"
  start generic
done
attached || fail "not attached again after a SIGKILL"
ask @192.0.2.1 www.example.test A | grep -q "192.0.2.80" || fail "no answer in generic mode"
stop TERM
grep -q "xdp_queries=1 " "$log" || fail "generic mode did not answer through XDP"
detached || fail "still attached at the end"
echo "== rate limiting on the XDP path: a burst of 40 gets some TC=1 slips, not 40 answers"
start auto $'[rrl]\nrate = 2\nslip = 2'
burst=$(in_cli python3 - <<'PY'
import socket, struct
name = b"\x03www\x07example\x04test\x00"
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(1.0)
for i in range(40):
    s.sendto(struct.pack("!HHHHHH", i, 0, 1, 0, 0, 0) + name + b"\x00\x01\x00\x01",
             ("192.0.2.1", 53))
full = tc = 0
try:
    while True:
        answer = s.recv(4096)
        if answer[2] & 0x02:
            tc += 1
        else:
            full += 1
except OSError:
    pass
print(full, tc)
PY
)
read -r full tc <<<"$burst"
echo "answers $full, TC slips $tc of 40"
((tc > 0 && full + tc < 40)) || fail "rate limiting did not apply through XDP ($burst)"
stop TERM
grep -q "xdp_queries=40 " "$log" || fail "the burst did not go through XDP"

echo "== --daemon: the forked daemon serves through XDP"
config auto "pid-file = \"$work/ternd.pid\""
printf '[log]\nfile = "%s"\n' "$log" >>"$work/ternd.toml"
: >"$log"
in_srv "$TERND" -c "$work/ternd.toml" --daemon || fail "the daemon did not start"
pid=$(cat "$work/ternd.pid")
ask @192.0.2.1 www.example.test A | grep -q "192.0.2.80" || fail "no answer from the daemon"
kill -TERM "$pid"
for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
pid=""
grep -q "xdp_queries=1 " "$log" || fail "the daemon did not answer through XDP"
detached || fail "still attached after the daemon stopped"
echo "== tests/xdp: all passed"
