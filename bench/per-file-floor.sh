#!/usr/bin/env bash
# What a tree of many small files costs `fixity protect` beyond its bytes: the tree, and
# the same bytes in files of 8 MiB, each protected ROUNDS times (warm cache, interleaved), and
# each read once by `fixity hash -a crc32` (open, read, close; CRC-32 costs next to
# nothing). Prints the mean wall and CPU seconds (user + system) of each, then:
#   - per file: the CPU the tree's protect costs beyond the large files', in microseconds;
#   - of it, touching the files: the tree's read beyond the large files' read;
#   - the floor: (the large files' protect CPU + touching the files) / the cores, the wall
#     time of the tree's protect if every core did nothing else and the files cost only
#     their opening and reading, as MB/s.
#
#   bench/per-file-floor.sh ROUNDS DIR [BIN]      (BIN: target/release/fixity)
#
# The large files are written under a scratch directory on the same file system as /tmp.
set -euo pipefail
R=$1 D=$(cd "$2" && pwd) BIN=${3:-target/release/fixity}
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
large=$(mktemp -d /tmp/per-file-floor.XXXXXX)
trap 'rm -rf "$large"' EXIT
(cd "$D" && find . -path ./.fixity -prune -o -type f -print0 | sort -z | xargs -0 cat) |
  split -b 8M -d -a 3 - "$large/part."
files=$(cd "$D" && find . -path ./.fixity -prune -o -type f -print | wc -l)
bytes=$(cat "$large"/part.* | wc -c)
"$BIN" scan -q "$D"
"$BIN" scan -q "$large"
out=$(mktemp)
run() { # NAME COMMAND...: one timed run, "NAME wall user sys" appended to $out
  local name=$1; shift
  /usr/bin/time -f "$name %e %U %S" -a -o "$out" "$@" >/dev/null
}
for _ in $(seq "$R"); do
  rm -rf "$D/.fixity/par2"; run protect-tree "$BIN" protect -q --redundancy 10% "$D"
  rm -rf "$large/.fixity/par2"; run protect-large "$BIN" protect -q --redundancy 10% "$large"
  run read-tree "$BIN" hash -a crc32 -r "$D"
  run read-large "$BIN" hash -a crc32 -r "$large"
done
cores=$(nproc)
awk -v files="$files" -v bytes="$bytes" -v cores="$cores" '
  { w[$1] += $2; c[$1] += $3 + $4; n[$1]++ }
  END {
    for (k in w) { w[k] /= n[k]; c[k] /= n[k] }
    split("protect-tree protect-large read-tree read-large", order, " ")
    for (i = 1; i <= 4; i++) { k = order[i]; printf "%-13s wall %.3f s  cpu %.3f s\n", k, w[k], c[k] }
    extra = c["protect-tree"] - c["protect-large"]; touch = c["read-tree"] - c["read-large"]
    printf "%d files, %.1f MB\n", files, bytes / 1e6
    printf "per file beyond the same bytes in large files: %.1f us CPU, of which touching the files %.1f us\n",
      extra / files * 1e6, touch / files * 1e6
    floor = (c["protect-large"] + touch) / cores
    printf "floor on %d cores: %.3f s (%.0f MB/s); measured %.3f s (%.0f MB/s); the large files %.0f MB/s\n",
      cores, floor, bytes / floor / 1e6, w["protect-tree"], bytes / w["protect-tree"] / 1e6,
      bytes / w["protect-large"] / 1e6
  }' "$out"
rm -f "$out"
