#!/usr/bin/env bash
# Builds fixity as one static executable (musl libc, no shared library needed), for
# machines whose glibc is older than the build machine's, and for the container image
# (dist/container/Containerfile):
#
#   bash dist/static/build.sh                 # x86_64: target/x86_64-unknown-linux-musl/PROFILE/fixity
#   bash dist/static/build.sh --check         # and check it: static, --version, a hash equal to the host build's
#   FIXITY_STATIC_TARGET=aarch64-unknown-linux-musl bash dist/static/build.sh --check   # another architecture
#
# Needs the Rust target (rustup target add x86_64-unknown-linux-musl) and a C compiler
# for musl (Debian: apt-get install musl-tools), which ring, SQLite, BLAKE3's assembly and
# mimalloc are compiled with. The allocator is mimalloc (see Cargo.toml): musl's malloc
# is slow under threads. FIXITY_STATIC_PROFILE picks the Cargo profile (default `deb`:
# release with thin LTO; `release`: fat LTO, slower to build).
#
# aarch64, cross-compiled on x86_64 Debian (CI builds and checks it): rustup target add
# aarch64-unknown-linux-musl; dpkg --add-architecture arm64; apt-get update; apt-get
# install gcc-aarch64-linux-gnu musl-dev:arm64 qemu-user. musl-dev:arm64 brings
# aarch64-linux-musl-gcc, the GNU cross compiler with musl's headers in place of glibc's
# (-specs); the Rust target brings musl itself. --check runs the binary under qemu-aarch64.
# The result: target/aarch64-unknown-linux-musl/deb/fixity, 17.2 MB, non-PIE as on x86_64.
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
run=()   # how the binary is run for --check: directly, or under qemu-user
if [ "$arch" = "$(uname -m)" ]; then
  cc=musl-gcc
  if ! command -v "$cc" >/dev/null 2>&1; then
    echo "dist/static/build.sh: $cc is missing (Debian: apt-get install musl-tools)" >&2
    exit 2
  fi
else
  # Another architecture: its musl cross compiler, as musl-cross-make names it. Debian's
  # is musl-dev of that architecture (multiarch): /usr/bin/$arch-linux-musl-gcc runs
  # the GNU cross compiler ($arch-linux-gnu-gcc) with -specs that put musl's headers in
  # place of glibc's. The GNU cross compiler alone is not enough: the C code would be
  # compiled against glibc's headers (their types, macros and inline functions) and
  # linked with musl. Debian's and qemu's names of the architecture (checked on aarch64
  # only):
  case $arch in
    aarch64) debarch=arm64 qarch=aarch64 ;;
    x86_64) debarch=amd64 qarch=x86_64 ;;
    i686) debarch=i386 qarch=i386 ;;
    powerpc64le) debarch=ppc64el qarch=ppc64le ;;
    *) debarch=$arch qarch=$arch ;;
  esac
  gnu=$arch-linux-gnu
  packages="dpkg --add-architecture $debarch; apt-get update; apt-get install gcc-$gnu musl-dev:$debarch"
  cc=$arch-linux-musl-gcc
  if ! command -v "$cc" >/dev/null 2>&1; then
    if command -v "$gnu-gcc" >/dev/null 2>&1; then
      echo "dist/static/build.sh: $gnu-gcc is there but not musl's headers for $arch, which the C code of the dependencies must be compiled against (Debian: $packages)" >&2
    else
      echo "dist/static/build.sh: no C compiler for musl on $arch: $cc is missing (Debian: $packages; or a musl cross toolchain with $cc on PATH)" >&2
    fi
    exit 2
  fi
  # Debian's wrapper runs ${REALGCC:-$gnu-gcc}, which is in another package.
  if [ -f "/usr/lib/$arch-linux-musl/musl-gcc.specs" ] && grep -q REALGCC "$(command -v "$cc")" \
    && ! command -v "${REALGCC:-$gnu-gcc}" >/dev/null 2>&1; then
    echo "dist/static/build.sh: $cc runs ${REALGCC:-$gnu-gcc}, which is missing (Debian: apt-get install gcc-$gnu)" >&2
    exit 2
  fi
  # A cross build links with the cross compiler as the driver; the C library, its start
  # files and the unwinder are still the Rust target's own musl (it passes -nostartfiles,
  # -nodefaultlibs and its self-contained directory first), as on x86_64.
  upper=$(echo "$target" | tr 'a-z-' 'A-Z_')
  export "CARGO_TARGET_${upper}_LINKER=$cc"
  # The archiver of the C libraries: the cross one when there is no $arch-linux-musl-ar.
  if ! command -v "$arch-linux-musl-ar" >/dev/null 2>&1 && command -v "$gnu-ar" >/dev/null 2>&1; then
    export "AR_${target//-/_}=$gnu-ar"
  fi
  if [ "$check" = yes ]; then
    # The check runs the binary: under qemu-user (user-mode emulation of one process).
    for q in "qemu-$qarch" "qemu-$qarch-static"; do
      if command -v "$q" >/dev/null 2>&1; then
        run=("$q")
        break
      fi
    done
    if [ ${#run[@]} -eq 0 ]; then
      echo "dist/static/build.sh: --check runs the $arch binary under qemu-$qarch, which is missing (Debian: apt-get install qemu-user)" >&2
      exit 2
    fi
  fi
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
  "${run[@]}" "$bin" --version
  # A small tree hashed by the static build and by a glibc build of the same source:
  # the same manifest, byte for byte.
  tree=$(mktemp -d)
  trap 'rm -rf "$tree"' EXIT
  mkdir -p "$tree/t/sub"
  printf 'hello\n' >"$tree/t/a.txt"
  : >"$tree/t/empty"
  head -c 3000000 /dev/urandom >"$tree/t/sub/big.bin"
  (cd "$tree" && "${run[@]}" "$root/$bin" hash -a sha256,blake3,xxh3 -r t >static.txt)
  # And read as from a seeking disk (one file at a time, each read first with
  # preadv2(RWF_NOWAIT)): musl passes on the ENOSYS of a kernel without preadv2 (Linux
  # before 4.6, qemu-user) where glibc says EOPNOTSUPP.
  (cd "$tree" && "${run[@]}" "$root/$bin" hash --storage hdd -a sha256,blake3,xxh3 -r t >static-hdd.txt)
  host=target/$profile/fixity
  [ -x "$host" ] || cargo build --locked --profile "$profile" --bin fixity
  (cd "$tree" && "$root/$host" hash -a sha256,blake3,xxh3 -r t >host.txt)
  for out in static.txt static-hdd.txt; do
    if ! cmp -s "$tree/$out" "$tree/host.txt"; then
      echo "dist/static/build.sh: the static build's manifest ($out) differs from the host build's:" >&2
      diff "$tree/host.txt" "$tree/$out" >&2 || true
      exit 1
    fi
  done
  (cd "$tree" && "${run[@]}" "$root/$bin" hash -a sha256 -r t >t.sha256 && "${run[@]}" "$root/$bin" check t.sha256 >/dev/null)
  echo "dist/static/build.sh: $bin is static and hashes as the host build does ($(wc -l <"$tree/static.txt") lines${run:+, under ${run[*]}})"
fi
