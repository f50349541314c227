#!/usr/bin/env bash
# Builds fixity as one static executable (musl libc, no shared library needed), for
# machines whose glibc is older than the build machine's, and for the container image
# (dist/container/Containerfile):
#
#   bash dist/static/build.sh                 # x86_64: target/x86_64-unknown-linux-musl/PROFILE/fixity
#   bash dist/static/build.sh --check         # and check it: static, --version, a hash equal to the host build's
#   FIXITY_STATIC_TARGET=aarch64-unknown-linux-musl bash dist/static/build.sh   # another architecture
#
# Needs the Rust target (rustup target add x86_64-unknown-linux-musl) and a C compiler
# for musl (Debian: apt-get install musl-tools), which ring, SQLite, BLAKE3's assembly and
# mimalloc are compiled with. The allocator is mimalloc (see Cargo.toml): musl's malloc
# is slow under threads. FIXITY_STATIC_PROFILE picks the Cargo profile (default `deb`:
# release with thin LTO; `release`: fat LTO, slower to build).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD

target=${FIXITY_STATIC_TARGET:-x86_64-unknown-linux-musl}
profile=${FIXITY_STATIC_PROFILE:-deb}
check=no
for a in "$@"; do
  case $a in
    --check) check=yes ;;
    *) echo "dist/static/build.sh: unknown argument $a (--check)" >&2; exit 2 ;;
  esac
done

if ! rustup target list --installed 2>/dev/null | grep -qx "$target"; then
  echo "dist/static/build.sh: the Rust target $target is missing: rustup target add $target" >&2
  exit 2
fi
arch=${target%%-*}
if [ "$arch" = "$(uname -m)" ]; then
  cc=musl-gcc
else
  cc=$arch-linux-musl-gcc
  upper=$(echo "$target" | tr 'a-z-' 'A-Z_')
  export "CARGO_TARGET_${upper}_LINKER=$cc"   # a cross build links with the cross compiler
fi
if ! command -v "$cc" >/dev/null 2>&1; then
  echo "dist/static/build.sh: $cc is missing (Debian: apt-get install musl-tools; another architecture needs its musl cross compiler)" >&2
  exit 2
fi
# The C code of the dependencies is compiled for musl; Rust links the result itself, with
# its own musl start files, statically (musl-gcc as the linker would link dynamically).
export "CC_${target//-/_}=$cc"
# mimalloc reads no MIMALLOC_* variable: looking up each of its ~40 options in the
# environment was a sixth of the instructions of a one-file `fixity hash` (docs/benchmarks.md,
# issue 25). The cc crate takes this target's flags instead of CFLAGS, so CFLAGS is kept.
export "CFLAGS_${target//-/_}=${CFLAGS:-} -DMI_NO_GETENV"
# Linked as a plain static executable, not static-PIE: a static-PIE binary applies its
# ~38,000 relocations at every start (145 pages of .data.rel.ro written), which doubled the
# start-up time (docs/benchmarks.md, issue 25). The libraries stay position-independent;
# only the executable is linked at a fixed address.
cargo rustc --locked --profile "$profile" --target "$target" --bin fixity -- -C relocation-model=static
bin="target/$target/$profile/fixity"
ls -l "$bin"

if [ "$check" = yes ]; then
  # Static: no program interpreter, no shared library, no relocations left for the start.
  if readelf -l "$bin" | grep -q 'INTERP'; then
    echo "dist/static/build.sh: $bin asks for a dynamic loader: not static" >&2
    exit 1
  fi
  if readelf -d "$bin" 2>/dev/null | grep -q 'NEEDED'; then
    echo "dist/static/build.sh: $bin needs shared libraries: not static" >&2
    exit 1
  fi
  if readelf -h "$bin" | grep -q 'DYN'; then
    echo "dist/static/build.sh: $bin is position-independent (static-PIE): relocated at every start" >&2
    exit 1
  fi
  "$bin" --version
  # A small tree hashed by the static build and by a glibc build of the same source:
  # the same manifest, byte for byte.
  tree=$(mktemp -d)
  trap 'rm -rf "$tree"' EXIT
  mkdir -p "$tree/t/sub"
  printf 'hello\n' >"$tree/t/a.txt"
  : >"$tree/t/empty"
  head -c 3000000 /dev/urandom >"$tree/t/sub/big.bin"
  (cd "$tree" && "$root/$bin" hash -a sha256,blake3,xxh3 -r t >static.txt)
  host=target/$profile/fixity
  [ -x "$host" ] || cargo build --locked --profile "$profile" --bin fixity
  (cd "$tree" && "$root/$host" hash -a sha256,blake3,xxh3 -r t >host.txt)
  if ! cmp -s "$tree/static.txt" "$tree/host.txt"; then
    echo "dist/static/build.sh: the static build's manifest differs from the host build's:" >&2
    diff "$tree/host.txt" "$tree/static.txt" >&2 || true
    exit 1
  fi
  (cd "$tree" && "$root/$bin" hash -a sha256 -r t >t.sha256 && "$root/$bin" check t.sha256 >/dev/null)
  echo "dist/static/build.sh: $bin is static and hashes as the host build does ($(wc -l <"$tree/static.txt") lines)"
fi
