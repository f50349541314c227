#!/usr/bin/env bash
# Builds the container image fixity:VERSION from dist/container/Containerfile: FROM
# scratch, the static binary of dist/static/build.sh, the build machine's CA
# certificates, an empty /tmp.
#
#   bash dist/container/build.sh             # build the image (podman, else buildah)
#   bash dist/container/build.sh --check     # and run it: its hash of a mounted tree must
#                                            # equal the host binary's, byte for byte
#
# On machines like the CI's (root, no registry, cgroup v1) podman needs the flags of
# ../shared/design/containers.md: vfs storage, runc, cgroupfs, no network, no raised
# ulimits. FIXITY_PODMAN_FLAGS replaces podman's own flags (e.g. empty where the defaults
# work).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD

check=no
for a in "$@"; do
  case $a in
    --check) check=yes ;;
    *) echo "dist/container/build.sh: unknown argument $a (--check)" >&2; exit 2 ;;
  esac
done

target=${FIXITY_STATIC_TARGET:-x86_64-unknown-linux-musl}
profile=${FIXITY_STATIC_PROFILE:-deb}
bin="target/$target/$profile/fixity"
[ -x "$bin" ] || bash dist/static/build.sh
version=$("$bin" --version | awk '{print $2}')
certs=/etc/ssl/certs/ca-certificates.crt
if [ ! -s "$certs" ]; then
  echo "dist/container/build.sh: $certs is missing (Debian: apt-get install ca-certificates)" >&2
  exit 2
fi

# The build context: the Containerfile and rootfs/.
ctx=target/container
rm -rf "$ctx"
mkdir -p "$ctx/rootfs/usr/bin" "$ctx/rootfs/etc/ssl/certs" "$ctx/rootfs/tmp" "$ctx/rootfs/data"
chmod 1777 "$ctx/rootfs/tmp"
install -m 755 "$bin" "$ctx/rootfs/usr/bin/fixity"
install -m 644 "$certs" "$ctx/rootfs/etc/ssl/certs/ca-certificates.crt"
# A passwd and group naming root and nobody, so --user 65534 and ls-style owner names work.
printf 'root:x:0:0:root:/root:/usr/bin/fixity\nnobody:x:65534:65534:nobody:/nonexistent:/usr/bin/fixity\n' \
  >"$ctx/rootfs/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$ctx/rootfs/etc/group"
cp dist/container/Containerfile "$ctx/Containerfile"

conf=$(mktemp)
trap 'rm -f "$conf"' EXIT
# The VM refuses raising RLIMIT_NOFILE/NPROC (see containers.md).
printf '[containers]\ndefault_ulimits = []\n' >"$conf"
export CONTAINERS_CONF=${CONTAINERS_CONF:-$conf}
image="fixity:$version"
if command -v podman >/dev/null 2>&1; then
  podman build --storage-driver vfs -q -t "$image" -f "$ctx/Containerfile" "$ctx" >/dev/null
  size=$(podman image inspect --storage-driver vfs --format '{{.Size}}' "$image")
elif command -v buildah >/dev/null 2>&1; then
  buildah --storage-driver vfs bud -q -t "$image" -f "$ctx/Containerfile" "$ctx" >/dev/null
  size=$(buildah --storage-driver vfs inspect --format '{{.ImageSize}}' "$image" 2>/dev/null || echo "?")
else
  echo "dist/container/build.sh: neither podman nor buildah is installed (apt-get install podman runc)" >&2
  exit 2
fi
echo "dist/container/build.sh: built $image ($size bytes)"

if [ "$check" = yes ]; then
  if ! command -v podman >/dev/null 2>&1; then
    echo "dist/container/build.sh: --check runs the image with podman, which is missing" >&2
    exit 2
  fi
  # podman's own flags, then run's.
  read -r -a flags <<<"${FIXITY_PODMAN_FLAGS:---runtime runc --storage-driver vfs --cgroup-manager cgroupfs}"
  run=(run --rm --network=none)
  tree=$(mktemp -d)
  trap 'rm -f "$conf"; rm -rf "$tree"' EXIT
  mkdir -p "$tree/t/sub dir"
  printf 'hello\n' >"$tree/t/a.txt"
  : >"$tree/t/empty"
  head -c 2000000 /dev/urandom >"$tree/t/sub dir/big.bin"
  # The image hashes /data (the tree mounted read-only); the host binary hashes the same
  # tree from its parent: the same manifest, byte for byte.
  podman "${flags[@]}" "${run[@]}" -v "$tree/t:/data/t:ro" "$image" hash -a sha256 -r t >"$tree/image.txt"
  (cd "$tree" && "$root/$bin" hash -a sha256 -r t >host.txt)
  if ! cmp -s "$tree/image.txt" "$tree/host.txt"; then
    echo "dist/container/build.sh: the image's manifest differs from the host binary's:" >&2
    diff "$tree/host.txt" "$tree/image.txt" >&2 || true
    exit 1
  fi
  # The image checks its own manifest, and knows its version.
  cp "$tree/image.txt" "$tree/t.sha256"
  podman "${flags[@]}" "${run[@]}" -v "$tree:/data:ro" "$image" check t.sha256 >/dev/null
  podman "${flags[@]}" "${run[@]}" "$image" --version
  # The image runs `fixity serve` (host network: the only network here): it answers its
  # API about the mounted tree, and stops with status 0 on SIGTERM.
  mkdir -p "$tree/s"
  printf 'served\n' >"$tree/s/f.txt"
  "$root/$bin" scan -q "$tree/s"
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  name="fixity-serve-check-$$"
  podman "${flags[@]}" run -d --name "$name" --network=host -v "$tree/s:/data/s" "$image" \
    serve --listen "127.0.0.1:$port" --refresh 1 s >/dev/null
  ok=no
  for _ in $(seq 1 50); do
    if fleet=$(python3 -c "import urllib.request,sys; print(urllib.request.urlopen('http://127.0.0.1:$port/api/fleet', timeout=2).read().decode())" 2>/dev/null); then
      ok=yes; break
    fi
    sleep 0.2
  done
  podman "${flags[@]}" stop -t 10 "$name" >/dev/null
  status=$(podman "${flags[@]}" wait "$name" 2>/dev/null || podman "${flags[@]}" inspect --format '{{.State.ExitCode}}' "$name")
  podman "${flags[@]}" rm -f "$name" >/dev/null 2>&1 || true
  if [ $ok != yes ] || ! grep -q '"files":1' <<<"$fleet"; then
    echo "dist/container/build.sh: the image's fixity serve did not answer its API: ${fleet:-nothing}" >&2
    exit 1
  fi
  [ "$status" = 0 ] || { echo "dist/container/build.sh: fixity serve in the image stopped with status $status" >&2; exit 1; }
  echo "dist/container/build.sh: $image serves a mounted tree (fixity serve, port $port) and stops cleanly"
  echo "dist/container/build.sh: $image hashes a mounted tree as the host binary does ($(wc -l <"$tree/image.txt") files)"
fi
