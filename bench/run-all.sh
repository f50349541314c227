#!/usr/bin/env bash
# The whole comparison behind docs/benchmarks.md: D1/D2/D3 warm for each algorithm a peer
# also has, and D3 cold. Run from the directory holding D1 D2 D3 (gen-datasets.py's DEST).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p /tmp/fixity-bench/results
echo "| data | algorithm | cache | command | min s | median s | max s |"
echo "|---|---|---|---|---|---|---|"
# The read ceiling: every byte read, nothing hashed (two readers, like the -P2 peers).
for ds in D3 D1 D2; do
  hyperfine --style basic -w 1 -r 5 --export-json "/tmp/fixity-bench/results/$ds-read-warm.json" \
    "find $ds -type f -print0 | xargs -0 -P2 cat > /dev/null" >/dev/null 2>&1
  python3 "$here/summarize.py" "/tmp/fixity-bench/results/$ds-read-warm.json" $ds "(read only)" warm | head -1
done
for ds in D3 D1 D2; do
  for algo in md5 sha1 sha256 blake2b blake3 xxh3 crc32; do
    runs=5; [ $ds = D2 ] && runs=3
    "$here/compare.sh" $ds $algo warm $runs 2>/dev/null
  done
done
for algo in sha256 md5 blake3 xxh3; do
  WITH_SSD=1 "$here/compare.sh" D3 $algo cold 3 2>/dev/null
done
