#!/bin/bash
# usage: bench/pg-network.sh ROUNDS BIN [DELAYS]: a PostgreSQL catalog across a network
# (issue 41). `scan` (first and again) and `verify` of D3 against PostgreSQL reached
# through Toxiproxy with DELAYS ms of added round-trip time (default "0 1 5"), and
# straight to the server (no proxy) for reference. Per run: wall seconds, the server's CPU
# (the postmaster's own and its reaped backends' user+system time, from /proc), and the
# round trips the run waited for, estimated as (t(d) - t(0)) / d.
#
# Needs: PostgreSQL 15 binaries (B), Toxiproxy's server (TOXI, `go install
# github.com/Shopify/toxiproxy/v2/cmd/server@latest`), D3 (../shared/bench/gen-datasets.py).
# The cluster listens on TCP 127.0.0.1:$PORT, the proxy on 127.0.0.1:$((PORT + 1)).
set -euo pipefail
R=${1:-3}; F=${2:?fixity binary}; DELAYS=${3:-0 1 5}
D=${D:-/tmp/fixity-bench/D3}
B=${B:-/usr/lib/postgresql/15/bin}; P=${P:-/tmp/pgnet}; PORT=${PORT:-5531}
TOXI=${TOXI:-/root/go/bin/server}; API=127.0.0.1:8474; PROXY=$((PORT + 1))

if [ ! -d "$P/data" ]; then
  mkdir -p "$P" && chown postgres "$P"
  runuser -u postgres -- "$B/initdb" -D "$P/data" -A trust -U postgres >/dev/null
fi
runuser -u postgres -- "$B/pg_ctl" -D "$P/data" -l "$P/log" -w \
  -o "-p $PORT -k $P -c listen_addresses=127.0.0.1" start >/dev/null 2>&1 || true
"$TOXI" -host 127.0.0.1 -port 8474 >"$P/toxiproxy.log" 2>&1 &
TP=$!
trap 'kill $TP 2>/dev/null; runuser -u postgres -- "$B/pg_ctl" -D "$P/data" -w stop >/dev/null' EXIT
for _ in $(seq 50); do curl -fsS "http://$API/version" >/dev/null 2>&1 && break; sleep 0.1; done
curl -fsS -X POST "http://$API/proxies" \
  -d "{\"name\":\"pg\",\"listen\":\"127.0.0.1:$PROXY\",\"upstream\":\"127.0.0.1:$PORT\"}" >/dev/null

# The latency toxic on the server's answers: every request waits d ms more for its reply.
delay() {
  curl -fsS -X DELETE "http://$API/proxies/pg/toxics/rtt" >/dev/null 2>&1 || true
  if [ "$1" != 0 ]; then
    curl -fsS -X POST "http://$API/proxies/pg/toxics" \
      -d "{\"name\":\"rtt\",\"type\":\"latency\",\"stream\":\"downstream\",\"attributes\":{\"latency\":$1,\"jitter\":0}}" >/dev/null
  fi
}
# The server's CPU so far, in clock ticks: the postmaster's utime+stime+cutime+cstime (its
# backends are its children: their time is added when it reaps them) and its children
# still running (checkpointer, writers).
ticks() {
  local pm; pm=$(head -1 "$P/data/postmaster.pid")
  local t; t=$(awk '{print $14+$15+$16+$17}' "/proc/$pm/stat")
  for c in $(pgrep -P "$pm"); do
    t=$((t + $(awk '{print $14+$15}' "/proc/$c/stat" 2>/dev/null || echo 0)))
  done
  echo "$t"
}
HZ=$(getconf CLK_TCK)
run() { # name url command...
  local name=$1 url=$2; shift 2
  local c0 t0 t1 c1
  c0=$(ticks); t0=$(date +%s.%N)
  "$F" "$@" -q --catalog "$url" "$D" >/dev/null 2>&1 || [ $? = 1 ]
  t1=$(date +%s.%N); sleep 0.3; c1=$(ticks)
  printf '%s %s %.2f s, server %.2f s CPU\n' "$name" "$1" "$(echo "$t1 - $t0" | bc)" \
    "$(echo "($c1 - $c0) / $HZ" | bc -l)"
}
for r in $(seq "$R"); do
  for d in direct $DELAYS; do
    runuser -u postgres -- "$B/dropdb" -h "$P" -p "$PORT" --if-exists fixity
    runuser -u postgres -- "$B/createdb" -h "$P" -p "$PORT" fixity
    if [ "$d" = direct ]; then
      url="postgresql://postgres@127.0.0.1:$PORT/fixity"
    else
      delay "$d"; url="postgresql://postgres@127.0.0.1:$PROXY/fixity"
    fi
    run "round $r, $d ms:" "$url" scan
    run "round $r, $d ms:" "$url" scan
    run "round $r, $d ms:" "$url" verify
  done
done
