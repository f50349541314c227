#!/usr/bin/env bash
# Sparse files read cold (issue 27): a 2 GiB sparse file (all holes but 4 bytes at 1 GiB)
# hashed cold, then warm, by each binary given and by rhash; then scan, verify and
# protect (--redundancy 1%) of a tree holding it, cold. Prints wall / system seconds and
# the file's bytes in the page cache after the cold run (fincore).
#
#   bench/sparse.sh DIR NAME=BINARY... [rhash]
#
# DIR is a scratch directory on the file system to measure (the file costs no disk).
# A file is made cold with `dd oflag=nocache count=0` (its pages only, not the machine's).
set -uo pipefail
T=$1/sparse-tree; shift
F=$T/sparse2g
mkdir -p "$T"
rm -f "$F"; truncate -s 2G "$F"
printf abcd | dd of="$F" bs=1 seek=1073741824 conv=notrunc status=none
for i in 1 2 3; do head -c 100000 /dev/urandom > "$T/small$i"; done
sync
out=$(mktemp)
cold() { dd of="$F" oflag=nocache conv=notrunc,fdatasync count=0 status=none; }
cached() { fincore -b -n -o RES "$F" | tr -d ' '; }
timed() { /usr/bin/time -o "$out" -f "%es/%Ssys" "$@" >/dev/null 2>&1; tail -1 "$out"; }
both() { # LABEL COMMAND...: cold, then warm
  local label=$1; shift
  cold; local c; c=$(timed "$@")
  printf '%-36s cold %-15s cache %-12s warm %s\n' "$label" "$c" "$(cached)" "$(timed "$@")"
}
for spec in "$@"; do
  if [ "$spec" = rhash ]; then
    both "rhash --md5 --crc32c" rhash --md5 --crc32c "$F"
    both "rhash --md5" rhash --md5 "$F"
    both "rhash --sha256" rhash --sha256 "$F"
    both "rhash --crc32c" rhash --crc32c "$F"
    continue
  fi
  name=${spec%%=*} bin=${spec#*=}
  for a in md5,crc32c md5 sha256 crc32c blake3 xxh3 md5,crc32c,sha256; do
    both "$name hash -a $a" "$bin" hash -a "$a" "$F"
  done
  rm -rf "$T/.fixity"
  for cmd in "scan -q" "verify -q" "protect -q --redundancy 1%"; do
    cold
    # shellcheck disable=SC2086
    printf '%-36s cold %-15s cache %s\n' "$name $cmd" "$(timed "$bin" $cmd "$T")" "$(cached)"
  done
  rm -rf "$T/.fixity"
done
rm -rf "$T" "$out"
