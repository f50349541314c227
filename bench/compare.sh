#!/usr/bin/env bash
# Side-by-side timing of fixity and the peer tools on one dataset, warm or cold cache.
#
#   bench/compare.sh DIR ALGO [warm|cold] [RUNS]
#
# DIR is a directory (D1, D3) or a single file (D2) made by ../shared/bench/gen-datasets.py.
# Writes a hyperfine markdown table to stdout (min/median/max come from the JSON export,
# see bench/summarize.py). Peers missing on PATH are listed as "not installed".
# Cold runs drop the page cache before every run (root: /proc/sys/vm/drop_caches).
set -euo pipefail
dir=$1 algo=$2 cache=${3:-warm} runs=${4:-5}
fixity=${FIXITY:-$(dirname "$0")/../target/release/fixity}
name=$(basename "$dir")
if [ -d "$dir" ]; then files="find $dir -type f -print0"; else files="printf '%s\0' $dir"; fi
cmds=()
add() { cmds+=("$1"); }
have() { command -v "$1" >/dev/null 2>&1; }
add "$fixity hash -a $algo $dir"
[ "${WITH_SSD:-0}" = 1 ] && add "$fixity hash --storage ssd -a $algo $dir"
case $algo in
  md5|sha1|sha224|sha256|sha384|sha512)
    add "$files | xargs -0 -P2 ${algo}sum"
    have rhash && add "rhash -r --$algo $dir"
    case $algo in md5|sha1|sha256) have hashdeep && add "hashdeep -r -c $algo $dir";; esac ;;
  blake2b)
    add "$files | xargs -0 -P2 b2sum"
    have rhash && add "rhash -r --blake2b $dir" ;;
  blake3)
    have b3sum && add "$files | xargs -0 b3sum" ;;
  xxh3|xxh128|xxh64)
    h=$([ $algo = xxh3 ] && echo 3 || { [ $algo = xxh128 ] && echo 2 || echo 1; })
    have xxhsum && add "$files | xargs -0 -P2 xxhsum -H$h" ;;
  crc32|crc32c)
    have rhash && add "rhash -r --$algo $dir"
    [ $algo = crc32 ] && have cksfv && add "$files | xargs -0 cksfv -q" ;;
esac
for t in rhash hashdeep b3sum xxhsum cksfv; do have $t || echo "note: $t not installed" >&2; done
prep=()
if [ "$cache" = cold ]; then prep=(--prepare 'sync; echo 3 > /proc/sys/vm/drop_caches'); warm=0; else warm=1; fi
out=${OUT:-/tmp/fixity-bench/results}
mkdir -p "$out"
hyperfine -N --style basic --shell=bash -w $warm -r "$runs" "${prep[@]}" \
  --export-json "$out/$name-$algo-$cache.json" "${cmds[@]/#/}" >/dev/null 2>&1 || \
hyperfine --style basic -w $warm -r "$runs" "${prep[@]}" \
  --export-json "$out/$name-$algo-$cache.json" "${cmds[@]}" >/dev/null
python3 "$(dirname "$0")/summarize.py" "$out/$name-$algo-$cache.json" "$name" "$algo" "$cache"
