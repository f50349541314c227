#!/usr/bin/env bash
# Page timings of `fixity serve` (docs/benchmarks.md, "fixity serve"): one tree of N files
# (default 1,000,000) and a fleet of T trees (default 100) of N/T files each, every page
# asked R times in a row (min / median / max ms, warm: the catalogs read once), then V
# viewers at once (default 50) each loading the fleet and a tree page K times (latency
# percentiles), and the server's peak memory (VmHWM) before and after.
#
# The catalogs are made from a real scan of 1,000 files whose records are copied under
# other directories up to N (SQL, seconds instead of an hour of scanning); 0.01% of them
# corrupt (at least 3), 0.005% missing (at least 2), 10% last verified 40 days ago; the tree's runs are real.
#
#   bench/serve.sh [N] [TREES] [R] [VIEWERS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
fixity=${FIXITY:-$here/../target/release/fixity}
n=${1:-1000000}
trees=${2:-100}
rounds=${3:-20}
viewers=${4:-50}
work=$(mktemp -d /tmp/fixity-serve.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

# A real tree of 1,000 files, scanned and verified a few times (the runs of the charts).
mkdir -p "$work/seed"
python3 - "$work/seed" <<'PY'
import os, sys
for i in range(1000):
    d = os.path.join(sys.argv[1], f"d{i // 100:02}")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"f{i:04}.jpg"), "wb") as f:
        f.write(os.urandom(2048))
PY
"$fixity" scan -q "$work/seed"
for _ in 1 2 3; do "$fixity" verify -q "$work/seed"; done

grow() { # CATALOG N: copies the seed's records under other directories up to N
  python3 - "$1" "$2" <<'PY'
import sqlite3, sys, time
cat, n = sys.argv[1], int(sys.argv[2])
c = sqlite3.connect(cat)
cols = [r[1] for r in c.execute("PRAGMA table_info(files)")]
rest = ", ".join(cols[1:])
c.execute("CREATE TEMP TABLE seed AS SELECT * FROM files")
base = c.execute("SELECT count(*) FROM seed").fetchone()[0]
c.execute("BEGIN")
k = 1
while c.execute("SELECT count(*) FROM files").fetchone()[0] + base <= n:
    c.execute(f"INSERT INTO files (path, {rest}) SELECT CAST(printf('c%05d/', ?) || path AS BLOB), {rest} FROM seed", (k,))
    k += 1
now = int(time.time() * 1000)
c.execute("UPDATE files SET last_verified = ? WHERE abs(random()) % 10 = 0", (now - 40 * 86400000,))
corrupt, missing = max(3, n // 10000), max(2, n // 20000)
c.execute("UPDATE files SET last_result = 'corrupt', finding_since = ?, found_digest = digest WHERE path IN (SELECT path FROM files ORDER BY random() LIMIT ?)", (now, corrupt))
c.execute("UPDATE files SET missing_since = ?, last_result = 'missing' WHERE path IN (SELECT path FROM files WHERE last_result = 'ok' ORDER BY random() LIMIT ?)", (now, missing))
c.execute("COMMIT")
c.execute("ANALYZE")
c.close()
PY
}

mkdir -p "$work/one"
cp -r "$work/seed/.fixity" "$work/one/"
grow "$work/one/.fixity/catalog.db" "$n"
for i in $(seq -w 1 "$trees"); do
  mkdir -p "$work/fleet/t$i"
  cp -r "$work/seed/.fixity" "$work/fleet/t$i/"
done
grow "$work/fleet/t$(seq -w 1 "$trees" | head -1)/.fixity/catalog.db" $((n / trees))
for i in $(seq -w 2 "$trees"); do
  cp "$work/fleet/t$(seq -w 1 "$trees" | head -1)/.fixity/catalog.db" "$work/fleet/t$i/.fixity/catalog.db"
done

serve() { # LABEL TREES...: starts the server, times its pages
  local label=$1; shift
  "$fixity" serve --listen 127.0.0.1:0 "$@" 2> "$work/log" &
  local pid=$!
  local addr=""
  for _ in $(seq 1 600); do
    addr=$(grep -o 'http://[0-9.:]*' "$work/log" | head -1 | sed 's|http://||') || true
    [ -n "$addr" ] && break
    sleep 0.2
  done
  echo "== $label: $(grep -o '([0-9]* trees\?' "$work/log" | tr -d '('), first look done"
  python3 - "$addr" "$pid" "$rounds" "$viewers" <<'PY'
import http.client, json, statistics, sys, threading, time, urllib.parse
addr, pid, rounds, viewers = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
host, port = addr.split(":")
def get(path):
    c = http.client.HTTPConnection(host, int(port), timeout=60)
    t = time.perf_counter()
    c.request("GET", path, headers={"Host": addr})
    r = c.getresponse(); body = r.read()
    ms = (time.perf_counter() - t) * 1000
    c.close()
    assert r.status == 200, (path, r.status, body[:200])
    return ms, body
def hwm():
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmHWM") or line.startswith("VmRSS"):
            yield line.split()[1]
tree = json.loads(get("/api/tree/0")[1])
finding = tree["findings_page"]["items"][0]["path"]["text"]
after = tree["findings_page"]["next"]
pages = ["/", "/api/fleet", "/tree/0"] + ([f"/tree/0?after={after}"] if after else []) + ["/api/tree/0",
         "/tree/0/file?p=" + urllib.parse.quote(finding), "/metrics", "/actions"]
print(f"files {tree['files']}, findings {tree['findings']}; memory (kB) VmHWM/VmRSS before: {'/'.join(hwm())}")
print(f"{'page':46} {'min':>8} {'median':>8} {'max':>8}  ms ({rounds} in a row)")
for p in pages:
    times = [get(p)[0] for _ in range(rounds)]
    print(f"{p[:46]:46} {min(times):8.1f} {statistics.median(times):8.1f} {max(times):8.1f}")
lat, lock = [], threading.Lock()
def viewer():
    for i in range(10):
        for p in ("/", "/tree/0"):
            ms = get(p)[0]
            with lock: lat.append(ms)
t0 = time.perf_counter()
ts = [threading.Thread(target=viewer) for _ in range(viewers)]
[t.start() for t in ts]; [t.join() for t in ts]
wall = time.perf_counter() - t0
lat.sort()
q = lambda f: lat[min(len(lat) - 1, int(f * len(lat)))]
print(f"{viewers} viewers at once, {len(lat)} pages in {wall:.1f} s ({len(lat)/wall:.0f}/s): "
      f"median {q(0.5):.1f} ms, p95 {q(0.95):.1f} ms, max {lat[-1]:.1f} ms; "
      f"memory (kB) VmHWM/VmRSS after: {'/'.join(hwm())}")
PY
  kill "$pid"; wait "$pid" 2>/dev/null || true
}

serve "one tree of $n files" "$work/one"
serve "$trees trees of $((n / trees)) files" "$work"/fleet/t*
