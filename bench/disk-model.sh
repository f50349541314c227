#!/usr/bin/env bash
# A spinning disk's figures without the hardware: an ext4 image on a loop device, read
# through a cgroup v1 blkio throttle (read_iops_device and read_bps_device), so that every
# read request costs about 1/IOPS s and no more than BPS bytes pass per second. What it
# models and what not: docs/benchmarks.md, "The disk model". Needs root and cgroup v1's
# blkio controller (/sys/fs/cgroup/blkio).
#
#   bench/disk-model.sh setup [DIR...]   image + loop device + throttle; copies each DIR in
#                                         (default: /tmp/fixity-bench/D1 and D3)
#   bench/disk-model.sh seq               the model's sequential limit: dd of the image's data
#   bench/disk-model.sh run LABEL CMD...  one cold run of CMD inside the throttle: seconds
#   bench/disk-model.sh compare [DATA]    fixity (auto, hdd, ssd, -j 1) and the peers, each
#                                         cold, one after another, as a markdown table
#   bench/disk-model.sh probe [DATA]      what fixity's probe decides there (cold)
#   bench/disk-model.sh teardown          unmount, detach, remove the cgroup and the image
#
# Settings (environment): MODEL_DIR (/tmp/fixity-disk-model: image, mount point, state),
# IOPS (120), BPS (150000000), FIXITY (fixity on PATH, else target/bench-fast/fixity),
# ALGO (md5: fixity's and rhash's algorithm in `compare`), RUNS (1 per command).
# A cold run empties only the model's caches (the file system is unmounted and mounted
# again, the loop device's buffers flushed; the image is read with direct I/O, so the host's
# page cache never holds it); GLOBAL_DROP=1 also writes 3 to /proc/sys/vm/drop_caches.
set -euo pipefail

MODEL_DIR=${MODEL_DIR:-/tmp/fixity-disk-model}
IOPS=${IOPS:-120}
BPS=${BPS:-150000000}
ALGO=${ALGO:-md5}
RUNS=${RUNS:-1}
IMG=$MODEL_DIR/disk.img
MNT=$MODEL_DIR/mnt
STATE=$MODEL_DIR/state
CG=/sys/fs/cgroup/blkio/fixity-disk-model
here=$(cd "$(dirname "$0")" && pwd)

if [ -z "${FIXITY:-}" ]; then
  if command -v fixity >/dev/null 2>&1; then FIXITY=$(command -v fixity)
  else FIXITY=$here/../target/bench-fast/fixity; fi
fi

die() { echo "disk-model: $*" >&2; exit 2; }
loop_dev() { [ -f "$STATE" ] || die "no model set up (run: $0 setup)"; cat "$STATE"; }
majmin() { cat "/sys/block/$(basename "$1")/dev"; }

setup() {
  [ "$(id -u)" = 0 ] || die "needs root (loop devices, mount, cgroups)"
  [ -d /sys/fs/cgroup/blkio ] || die "no cgroup v1 blkio controller at /sys/fs/cgroup/blkio"
  [ -f "$STATE" ] && die "already set up ($(cat "$STATE")); run: $0 teardown"
  local dirs=("$@")
  [ ${#dirs[@]} -gt 0 ] || dirs=(/tmp/fixity-bench/D1 /tmp/fixity-bench/D3)
  mkdir -p "$MODEL_DIR" "$MNT"
  # Room for the data, its metadata (small files take a block each) and slack.
  local kb
  kb=$(du -sk --apparent-size "${dirs[@]}" | awk '{s += $1} END {print s}')
  local files
  files=$(find "${dirs[@]}" -type f | wc -l)
  truncate -s $(( (kb + files * 4) * 13 / 10 * 1024 + 256 * 1024 * 1024 )) "$IMG"
  # Inode tables and journal initialized now, not by a kernel thread during the runs.
  mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$IMG"
  local loop
  loop=$(losetup --find --show --direct-io=on "$IMG")
  echo "$loop" > "$STATE"
  local q=/sys/block/$(basename "$loop")/queue
  # The throttle is set up while the device still says it is solid-state: the kernel then
  # measures it in slices of 20 ms instead of 100 ms, so an idle device lets through a
  # burst of IOPS/50 requests, not IOPS/10 (a disk that lets 12 reads through at once
  # would look like flash to anything timing a few reads).
  mkdir -p "$CG"
  echo "$(majmin "$loop") $IOPS" > "$CG/blkio.throttle.read_iops_device"
  echo "$(majmin "$loop") $BPS" > "$CG/blkio.throttle.read_bps_device"
  # What a disk of this kind reports, and the scheduler distributions give one.
  echo 1 > "$q/rotational"
  grep -q mq-deadline "$q/scheduler" && echo mq-deadline > "$q/scheduler"
  mount "$loop" "$MNT"
  for d in "${dirs[@]}"; do cp -a "$d" "$MNT/"; done
  sync
  echo "model: $loop ($(majmin "$loop")) holding ${dirs[*]##*/} at $MNT, reads throttled to $IOPS requests/s and $BPS B/s"
}

# Empties the model's caches: remount (the file system's pages, dentries and inodes go),
# and the loop device's own buffers.
cold() {
  local loop
  loop=$(loop_dev)
  umount "$MNT"
  blockdev --flushbufs "$loop"
  if [ "${GLOBAL_DROP:-0}" = 1 ]; then sync; echo 3 > /proc/sys/vm/drop_caches; fi
  mount "$loop" "$MNT"
}

# Runs "$@" inside the throttle, from the mount point; prints the wall seconds.
throttled() {
  local t0 t1
  t0=$(date +%s.%N)
  (cd "$MNT" && sh -c 'echo $$ > "$0/cgroup.procs" && shift && exec "$@"' "$CG" _ "$@" >/dev/null)
  t1=$(date +%s.%N)
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }'
}

# Megabytes (10^6) per second: BYTES over SECONDS.
mbps() { awk -v b="$1" -v s="$2" 'BEGIN { printf "%.0f", b / s / 1e6 }'; }

# The bytes the data directories hold.
data_bytes() { (cd "$MNT" && du -sb --apparent-size "$@" | awk '{s += $1} END {print s}'); }

seq_limit() {
  local loop used
  loop=$(loop_dev)
  # The blocks the file system uses, read front to back: what the disk model gives a
  # reader that never seeks.
  used=$(df -B1 --output=used "$MNT" | tail -1)
  cold
  local s
  s=$(throttled dd if="$loop" of=/dev/null bs=4M count=$(( used / 4194304 )) status=none)
  local bytes=$(( used / 4194304 * 4194304 ))
  echo "sequential limit: $bytes bytes in $s s = $(mbps "$bytes" "$s") MB/s"
}

run_one() {
  local label=$1; shift
  cold
  local s
  s=$(throttled "$@")
  echo "$label: $s s"
}

compare() {
  local data=${1:-D1}
  [ -d "$MNT/$data" ] || die "$data is not in the model (setup copies it in)"
  local bytes
  bytes=$(data_bytes "$data")
  local rows=(
    "fixity (auto)|$FIXITY hash -a $ALGO $data"
    "fixity --storage hdd|$FIXITY hash --storage hdd -a $ALGO $data"
    "fixity --storage ssd|$FIXITY hash --storage ssd -a $ALGO $data"
    "fixity -j 1 (one reader)|$FIXITY hash -j 1 -a $ALGO $data"
    "rhash -r --$ALGO|rhash -r --$ALGO $data"
    "fixity -a blake3|$FIXITY hash -a blake3 $data"
    "b3sum (xargs)|find $data -type f -print0 | xargs -0 b3sum"
    "fixity -a sha256|$FIXITY hash -a sha256 $data"
    "sha256sum (xargs -P2)|find $data -type f -print0 | xargs -0 -P2 -n 64 sha256sum"
    "cat (xargs, one reader)|find $data -type f -print0 | xargs -0 cat"
  )
  echo "| data | command | cold s | MB/s |"
  echo "|---|---|---|---|"
  local row label cmd r s
  for row in "${rows[@]}"; do
    label=${row%%|*}; cmd=${row#*|}
    for r in $(seq "$RUNS"); do
      cold
      s=$(throttled sh -c "$cmd")
      echo "| $data | \`$cmd\` ($label) | $s | $(mbps "$bytes" "$s") |"
    done
  done
}

probe() {
  local data=${1:-D1}
  cold
  (cd "$MNT" && sh -c 'echo $$ > "$0/cgroup.procs" && shift && exec "$@"' "$CG" _ \
    "$FIXITY" hash -v -a "$ALGO" "$data" 2>&1 >/dev/null | grep 'storage:')
}

teardown() {
  if [ -f "$STATE" ]; then
    local loop
    loop=$(cat "$STATE")
    mountpoint -q "$MNT" && umount "$MNT"
    losetup -d "$loop" 2>/dev/null || true
    rm -f "$STATE"
  fi
  [ -d "$CG" ] && rmdir "$CG"
  rm -f "$IMG"
  rmdir "$MNT" "$MODEL_DIR" 2>/dev/null || true
}

cmd=${1:-}
[ $# -gt 0 ] && shift
case "$cmd" in
  setup) setup "$@" ;;
  seq) seq_limit ;;
  run) [ $# -ge 2 ] || die "usage: $0 run LABEL CMD..."; run_one "$@" ;;
  compare) compare "$@" ;;
  probe) probe "$@" ;;
  teardown) teardown ;;
  *) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
