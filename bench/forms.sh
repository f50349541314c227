#!/usr/bin/env bash
# What pairing names across Unicode forms costs a scan (src/scrub/forms.rs): N files whose
# directory is renamed, once to another ASCII name (every record missing, every file new:
# paired as moves by their digests) and once from its NFD form to its NFC form (the same
# counts: paired by name). Each round makes the tree, scans it, renames, and times the
# scan that pairs; rounds alternate the two, warm cache. Prints min / median / max seconds.
#
#   bench/forms.sh [N] [ROUNDS]     # default 20000 files, 5 rounds
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
fixity=${FIXITY:-$here/../target/release/fixity}
n=${1:-20000}
rounds=${2:-5}
work=$(mktemp -d /tmp/fixity-forms.XXXXXX)
trap 'rm -rf "$work"' EXIT
nfd=$(printf 'cafe\xcc\x81')
nfc=$(printf 'caf\xc3\xa9')

one() { # KIND FROM TO: seconds of the scan after the rename
  local t="$work/t"
  rm -rf "$t"
  mkdir -p "$t/$2"
  python3 - "$t/$2" "$n" <<'EOF'
import os, sys
d, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    sub = os.path.join(d, f"d{i // 1000:03}")
    os.makedirs(sub, exist_ok=True)
    with open(os.path.join(sub, f"f{i:06}"), "wb") as f:
        f.write(f"file {i}\n".encode())
EOF
  "$fixity" scan -q "$t"
  mv "$t/$2" "$t/$3"
  local start end
  start=$(date +%s.%N)
  "$fixity" scan --json "$t" > "$work/out"
  end=$(date +%s.%N)
  # Every file paired, or the figure is not what it claims.
  python3 - "$work/out" "$n" <<'EOF'
import json, sys
counts = json.loads(open(sys.argv[1]).read().splitlines()[-1])["summary"]["counts"]
want = int(sys.argv[2])
if (counts["moved"], counts["missing"], counts["new"]) != (want, 0, 0):
    sys.exit(f"not every file paired: {counts}")
EOF
  echo "$1 $(echo "$end - $start" | bc)"
}

for _ in $(seq "$rounds"); do
  one ascii old new
  one forms "$nfd" "$nfc"
done > "$work/times"
for kind in ascii forms; do
  sort -n -k2 <(grep "^$kind " "$work/times") | awk -v k="$kind" -v n="$n" '
    { t[NR] = $2 } END { printf "%-6s %d files renamed: min %.3f  median %.3f  max %.3f s\n", k, n, t[1], t[int((NR + 1) / 2)], t[NR] }'
done
