#!/bin/bash
# usage: bench/profiles.sh RUNS BIN_A BIN_B: two builds of one commit (say fat LTO with one
# codegen unit against the release profile) on the headline commands, warm cache, runs
# interleaved (A, B, A, B ...) after one warm-up each; prints min / median / max seconds
# and B's median over A's (issue 41: the release profile may cost at most 3%).
# Needs D1, D2, D3 in $DATA (../shared/bench/gen-datasets.py) and a 256 MiB file $BIG.
set -euo pipefail
R=${1:-5}; A=${2:?}; B=${3:?}
DATA=${DATA:-/tmp/fixity-bench}; BIG=${BIG:-/tmp/p2/big.bin}; W=$(mktemp -d /tmp/profiles.XXXXXX)
trap 'rm -rf "$W"' EXIT
cmds=(
  "hash -a md5 -r $DATA/D1"
  "hash -a sha256 -r $DATA/D1"
  "hash -a blake3 -r $DATA/D1"
  "hash -a xxh3 $DATA/D2/*"
  "hash -a blake3 $DATA/D2/*"
  "hash -a md5 -r $DATA/D3"
  "hash -a blake3 -r $DATA/D3"
  "scan -q --catalog $W/CAT.db $DATA/D3"
  "verify -q --catalog $W/CAT.db $DATA/D3"
  "protect -q --par2-dir $W/p2-BIN --redundancy 10% $(dirname "$BIG")"
)
secs() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null 2>&1 || true; t1=$(date +%s.%N); echo "$t1 - $t0" | bc; }
stats() { sort -g | awk '{v[NR]=$1} END {printf "%.3f / %.3f / %.3f", v[1], v[int((NR+1)/2)], v[NR]}'; }
median() { sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
for c in "${cmds[@]}"; do
  : >"$W/a"; : >"$W/b"
  for bin in A B; do
    f=${!bin}; cc=${c//CAT/$bin}; cc=${cc//BIN/$bin}
    case $c in
      scan*) rm -f "$W/$bin.db"* ;;
      protect*) "$f" scan -q "$(dirname "$BIG")" >/dev/null 2>&1 || true ;;
    esac
    # shellcheck disable=SC2086
    secs "$f" $cc >/dev/null   # warm-up
  done
  for _ in $(seq "$R"); do
    for bin in A B; do
      f=${!bin}; cc=${c//CAT/$bin}; cc=${cc//BIN/$bin}
      case $c in
        scan*) rm -f "$W/$bin.db"* ;;
        protect*) rm -rf "$W/p2-$bin" ;;
      esac
      # shellcheck disable=SC2086
      secs "$f" $cc >>"$W/$(echo $bin | tr AB ab)"
    done
  done
  ma=$(median <"$W/a"); mb=$(median <"$W/b")
  printf '%-40s A %s  B %s  B/A %.3f\n' "${c//$DATA\//}" "$(stats <"$W/a")" "$(stats <"$W/b")" \
    "$(echo "$mb / $ma" | bc -l)"
done
