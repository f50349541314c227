#!/usr/bin/env bash
# Side-by-side timing of `fixity verify --remote` and `rclone check` on one bucket of
# moto's S3 server (tests/fixtures/remote/s3server.py, on 127.0.0.1), and how many objects
# each proves the same without downloading them.
#
#   bench/remote.sh [SMALL] [LARGE] [RUNS]
#
# Makes a tree of SMALL files of 1-64 KiB (default 5000) and LARGE files of 20 MiB
# (default 8), scans it with fixity (BLAKE3 catalog), and uploads it as the AWS CLI
# does (boto3's upload_file: 8 MiB parts past 8 MiB, with boto3's default CRC32). Then,
# warm page cache:
#   - fixity, first comparison: the catalog keeps no MD5 or ETag yet, so each object's
#     file is read once (the extras kept are deleted before each run);
#   - fixity, later comparisons: nothing read, one listing and no HEAD for single-part
#     objects;
#   - rclone check: reads and MD5s every local file on every run (rclone 1.60, Debian).
# Prints the hyperfine table, objects per second, and each tool's count of objects proven.
set -euo pipefail
small=${1:-5000} large=${2:-8} runs=${3:-5}
root=$(cd "$(dirname "$0")/.." && pwd)
fixity=${FIXITY:-$root/target/release/fixity}
out=${OUT:-/tmp/fixity-bench/results}
work=${WORK:-/tmp/fixity-bench/remote}
mkdir -p "$out" "$work"
command -v rclone >/dev/null || { echo "rclone is not installed (apt-get install rclone)" >&2; exit 2; }

exec 3< <(python3 "$root/tests/fixtures/remote/s3server.py")
read -r ready port _proxy <&3
[ "$ready" = READY ] || { echo "the S3 server did not start" >&2; exit 2; }
endpoint=http://127.0.0.1:$port

tree=$work/tree-$small-$large
if [ ! -d "$tree" ]; then
  python3 - "$tree" "$small" "$large" <<'EOF'
import os, random, sys
tree, small, large = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rnd = random.Random(23)
for i in range(small):
    d = os.path.join(tree, f"d{i % 50:02d}")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"f{i:06d}.bin"), "wb") as f:
        f.write(rnd.randbytes(rnd.randint(1024, 65536)))
for i in range(large):
    with open(os.path.join(tree, f"large{i:02d}.bin"), "wb") as f:
        f.write(rnd.randbytes(20 << 20))
EOF
fi
rm -rf "$tree/.fixity"
"$fixity" scan -q "$tree"
python3 - "$tree" <<'EOF' | python3 "$root/tests/fixtures/remote/upload.py" "$endpoint" bench
import json, os, sys
tree = sys.argv[1]
ups = []
for d, dirs, files in os.walk(tree):
    dirs[:] = [x for x in dirs if x != ".fixity"]
    for f in files:
        p = os.path.join(d, f)
        ups.append({"key": "copy/" + os.path.relpath(p, tree), "file": p})
print(json.dumps(ups))
EOF
objects=$(find "$tree" -path "$tree/.fixity" -prune -o -type f -print | wc -l)

export AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_EC2_METADATA_DISABLED=true
export RCLONE_CONFIG_MOTO_TYPE=s3 RCLONE_CONFIG_MOTO_PROVIDER=Other RCLONE_CONFIG_MOTO_ENDPOINT=$endpoint
export RCLONE_CONFIG_MOTO_ACCESS_KEY_ID=test RCLONE_CONFIG_MOTO_SECRET_ACCESS_KEY=test
export RCLONE_CONFIG_MOTO_FORCE_PATH_STYLE=true
db=$tree/.fixity/catalog.db
forget="python3 -c \"import sqlite3; c = sqlite3.connect('$db'); c.execute('DELETE FROM digests'); c.commit()\""
fx="$fixity verify -q '$tree' --remote s3://bench/copy --endpoint $endpoint"
# rclone check compares both ways and exits 1 on any difference; none is expected here.
rc="env -u AWS_CA_BUNDLE rclone check -q '$tree' moto:bench/copy --exclude '/.fixity/**'"
hyperfine --style basic -w 1 -r "$runs" -i --export-json "$out/remote.json" \
  -n "fixity first (reads each file once)" --prepare "$forget" "$fx" \
  -n "fixity again (reads nothing)" --prepare true "$fx" \
  -n "rclone check" --prepare true "$rc" >/dev/null
python3 "$root/bench/summarize.py" "$out/remote.json" "remote-$small-$large" "verify --remote" warm
python3 - "$out/remote.json" "$objects" <<'EOF'
import json, statistics, sys
res = json.load(open(sys.argv[1]))["results"]
n = int(sys.argv[2])
base = statistics.median(res[-1]["times"])
for r in res:
    m = statistics.median(r["times"])
    print(f"{r['command']}: {n / m:,.0f} objects/s, {base / m:.2f}x rclone check")
EOF
echo "proven without download:"
"$fixity" verify "$tree" --remote s3://bench/copy --endpoint "$endpoint" --json | tail -1 \
  | python3 -c 'import json,sys; s=json.load(sys.stdin); print("  fixity:", s["counts"], s["proofs"])'
env -u AWS_CA_BUNDLE rclone check "$tree" moto:bench/copy --exclude '/.fixity/**' 2>&1 | grep -E "matching|differences|hashes could not|not in" | sed 's/^/  rclone: /' || true
exec 3<&-
