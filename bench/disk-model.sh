#!/usr/bin/env bash
# A spinning disk's figures without the hardware, for fixity's storage policy and its
# benchmarks. Two models (what each models and what not: docs/benchmarks.md, "The disk
# model"):
#
#   MODEL=seek (default)  diskfs (examples/diskfs.rs), a FUSE file system serving each
#                         dataset as if from one disk head: seeks that grow with distance,
#                         half a turn after each, 150 MB/s; every open is cold.
#   MODEL=throttle        an ext4 image on a loop device read through a cgroup v1 blkio
#                         throttle (read_iops_device, read_bps_device): ~120 requests/s and
#                         150 MB/s, whatever the distance; needs root and /sys/fs/cgroup/blkio.
#
#   bench/disk-model.sh setup [DIR...]   mount the model over each DIR (default:
#                                        /tmp/fixity-bench/D1 and D3)
#   bench/disk-model.sh seq [DATA]       the model's sequential limit for DATA
#   bench/disk-model.sh run DATA CMD...  one cold run of the shell command CMD (in DATA's
#                                        model, from the directory holding DATA): seconds
#   bench/disk-model.sh compare [DATA]   fixity (auto, hdd, ssd, -j 1) and the peers, each
#                                        cold, one after another, as a markdown table
#   bench/disk-model.sh probe [DATA]     what fixity's storage probe decides there (cold)
#   bench/disk-model.sh teardown         unmount and remove everything setup made
#
# Settings (environment): MODEL_DIR (/tmp/fixity-disk-model), FIXITY (fixity on PATH, else
# target/bench-fast/fixity), ALGO (md5: the algorithm of fixity's and rhash's rows), RUNS
# (1 per command), DISKFS_ARGS (extra diskfs options: --mbps, --rpm, --seek, --capacity,
# --inodes), IOPS (120) and BPS (150000000) for the throttle. GLOBAL_DROP=1 also empties
# the whole page cache (/proc/sys/vm/drop_caches) before each throttled run.
set -euo pipefail

MODEL=${MODEL:-seek}
MODEL_DIR=${MODEL_DIR:-/tmp/fixity-disk-model}
IOPS=${IOPS:-120}
BPS=${BPS:-150000000}
ALGO=${ALGO:-md5}
RUNS=${RUNS:-1}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
DISKFS=${DISKFS:-$repo/target/bench-fast/examples/diskfs}
CG=/sys/fs/cgroup/blkio/fixity-disk-model
if [ -z "${FIXITY:-}" ]; then
  if command -v fixity >/dev/null 2>&1; then FIXITY=$(command -v fixity)
  else FIXITY=$repo/target/bench-fast/fixity; fi
fi

die() { echo "disk-model: $*" >&2; exit 2; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
mbps() { awk -v b="$1" -v s="$2" 'BEGIN { printf "%.0f", b / s / 1e6 }'; }
share() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f%%", 100 * a / b }'; }
# Where DATA lives in the model: the directory to run commands from (it holds DATA).
where() {
  case $MODEL in
    seek) echo "$MODEL_DIR/seek/$1" ;;
    throttle) echo "$MODEL_DIR/mnt" ;;
    *) die "MODEL is seek or throttle" ;;
  esac
}
data_bytes() { (cd "$(where "$1")" && du -sb --apparent-size "$1" | awk '{print $1}'); }

# --- MODEL=seek: diskfs -------------------------------------------------------------

seek_setup() {
  [ -x "$DISKFS" ] || (cd "$repo" && cargo build --profile bench-fast --example diskfs)
  local d name
  for d in "$@"; do
    name=$(basename "$d")
    mkdir -p "$MODEL_DIR/seek/$name/$name" "$MODEL_DIR/seek/.state"
    # shellcheck disable=SC2086
    "$DISKFS" ${DISKFS_ARGS:-} "$d" "$MODEL_DIR/seek/$name/$name" \
      > "$MODEL_DIR/seek/.state/$name.out" 2> "$MODEL_DIR/seek/.state/$name.log" &
    echo $! > "$MODEL_DIR/seek/.state/$name.pid"
    for _ in $(seq 50); do mountpoint -q "$MODEL_DIR/seek/$name/$name" && break; sleep 0.1; done
    mountpoint -q "$MODEL_DIR/seek/$name/$name" || die "diskfs did not mount $d"
    echo "model: $d served by diskfs at $MODEL_DIR/seek/$name/$name ($(cat "$MODEL_DIR/seek/.state/$name.log"))"
  done
}

# What the head did since the last call: "N read requests, M seeks, B bytes, S s busy".
seek_stats() {
  local name=$1 pid out lines
  pid=$(cat "$MODEL_DIR/seek/.state/$name.pid")
  out=$MODEL_DIR/seek/.state/$name.out
  lines=$(wc -l < "$out")
  kill -USR1 "$pid"
  for _ in $(seq 50); do [ "$(wc -l < "$out")" -gt "$lines" ] && break; sleep 0.05; done
  tail -1 "$out" | sed 's/^diskfs: //'
}

seek_teardown() {
  local pidf
  for pidf in "$MODEL_DIR"/seek/.state/*.pid; do
    [ -f "$pidf" ] || continue
    kill "$(cat "$pidf")" 2>/dev/null || true
  done
  sleep 0.5
  rm -rf "$MODEL_DIR/seek"
}

# --- MODEL=throttle: loop device + blkio throttle -------------------------------------

throttle_setup() {
  [ "$(id -u)" = 0 ] || die "needs root (loop devices, mount, cgroups)"
  [ -d /sys/fs/cgroup/blkio ] || die "no cgroup v1 blkio controller at /sys/fs/cgroup/blkio"
  [ -f "$MODEL_DIR/loop" ] && die "already set up ($(cat "$MODEL_DIR/loop")); run: $0 teardown"
  mkdir -p "$MODEL_DIR/mnt"
  local kb files img=$MODEL_DIR/disk.img
  kb=$(du -sk --apparent-size "$@" | awk '{s += $1} END {print s}')
  files=$(find "$@" -type f | wc -l)
  # Room for the data, its metadata (small files take a block each) and slack.
  truncate -s $(( (kb + files * 4) * 13 / 10 * 1024 + 256 * 1024 * 1024 )) "$img"
  # Inode tables and journal initialized now, not by a kernel thread during the runs.
  mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$img"
  local loop
  loop=$(losetup --find --show --direct-io=on "$img")
  echo "$loop" > "$MODEL_DIR/loop"
  local dev
  dev=$(cat "/sys/block/$(basename "$loop")/dev")
  mkdir -p "$CG"
  echo "$dev $IOPS" > "$CG/blkio.throttle.read_iops_device"
  echo "$dev $BPS" > "$CG/blkio.throttle.read_bps_device"
  # What a disk of this kind says of itself, and the scheduler distributions give one.
  echo 1 > "/sys/block/$(basename "$loop")/queue/rotational"
  grep -q mq-deadline "/sys/block/$(basename "$loop")/queue/scheduler" &&
    echo mq-deadline > "/sys/block/$(basename "$loop")/queue/scheduler"
  mount "$loop" "$MODEL_DIR/mnt"
  local d
  for d in "$@"; do cp -a "$d" "$MODEL_DIR/mnt/"; done
  sync
  echo "model: $loop ($dev) holding $* at $MODEL_DIR/mnt; reads throttled to $IOPS requests/s and $BPS B/s"
}

# Empties the model's caches: remount (the file system's pages, dentries and inodes go) and
# flush the loop device's own buffers; the image is read with direct I/O, so the host's
# page cache never holds it.
throttle_cold() {
  local loop
  loop=$(cat "$MODEL_DIR/loop")
  umount "$MODEL_DIR/mnt"
  blockdev --flushbufs "$loop"
  if [ "${GLOBAL_DROP:-0}" = 1 ]; then sync; echo 3 > /proc/sys/vm/drop_caches; fi
  mount "$loop" "$MODEL_DIR/mnt"
}

throttle_teardown() {
  if [ -f "$MODEL_DIR/loop" ]; then
    mountpoint -q "$MODEL_DIR/mnt" && umount "$MODEL_DIR/mnt"
    losetup -d "$(cat "$MODEL_DIR/loop")" 2>/dev/null || true
    rm -f "$MODEL_DIR/loop"
  fi
  [ -d "$CG" ] && rmdir "$CG"
  rm -f "$MODEL_DIR/disk.img"
  rmdir "$MODEL_DIR/mnt" 2>/dev/null || true
}

# --- both ----------------------------------------------------------------------------

# One cold run of the shell command "$2" for data "$1": prints the seconds, and for the
# seek model what the head did.
cold_run() {
  local data=$1 cmd=$2 t0 t1
  local dir
  dir=$(where "$data")
  case $MODEL in
    seek) seek_stats "$data" > /dev/null ;;
    throttle) throttle_cold ;;
  esac
  t0=$(date +%s.%N)
  if [ "$MODEL" = throttle ]; then
    (cd "$dir" && sh -c 'echo $$ > "$0/cgroup.procs" && exec sh -c "$1"' "$CG" "$cmd" > /dev/null)
  else
    (cd "$dir" && sh -c "$cmd" > /dev/null)
  fi
  t1=$(date +%s.%N)
  printf '%s' "$(secs "$t0" "$t1")"
  [ "$MODEL" = seek ] && printf ' (%s)' "$(seek_stats "$data")"
  echo
}

# The model's sequential limit for DATA, in seconds: what a reader that never waits for
# anything but the disk would take.
seq_seconds() {
  local data=$1
  case $MODEL in
    seek)
      # Every byte at the transfer rate (diskfs --mbps, 150 MB/s unless DISKFS_ARGS says).
      local rate
      rate=$(echo "${DISKFS_ARGS:-}" | sed -n 's/.*--mbps \([0-9.]*\).*/\1/p')
      awk -v b="$(data_bytes "$data")" -v r="${rate:-150}" 'BEGIN { printf "%.3f", b / (r * 1e6) }'
      ;;
    throttle)
      # dd of the blocks the file system uses, front to back, through the throttle,
      # scaled to DATA's share of them.
      local loop used t
      loop=$(cat "$MODEL_DIR/loop")
      used=$(df -B1 --output=used "$MODEL_DIR/mnt" | tail -1)
      t=$(cold_run "$data" "dd if=$loop of=/dev/null bs=4M count=$(( used / 4194304 )) status=none")
      awk -v t="$t" -v u="$(( used / 4194304 * 4194304 ))" -v b="$(data_bytes "$data")" \
        'BEGIN { printf "%.3f", t * b / u }'
      ;;
  esac
}

compare() {
  local data=${1:-D1}
  [ -d "$(where "$data")/$data" ] || die "$data is not in the model (run: $0 setup)"
  local bytes limit
  bytes=$(data_bytes "$data")
  limit=$(seq_seconds "$data")
  echo "model: $MODEL; $data: $bytes bytes; sequential limit $limit s ($(mbps "$bytes" "$limit") MB/s)"
  echo
  local rows=(
    "fixity (auto)|$FIXITY hash -a $ALGO $data"
    "fixity --storage hdd|$FIXITY hash --storage hdd -a $ALGO $data"
    "fixity --storage ssd|$FIXITY hash --storage ssd -a $ALGO $data"
    "fixity -j 1|$FIXITY hash -j 1 -a $ALGO $data"
    "rhash|rhash -r --$ALGO $data"
    "fixity blake3|$FIXITY hash -a blake3 $data"
    "b3sum (xargs)|find $data -type f -print0 | xargs -0 b3sum"
    "fixity sha256|$FIXITY hash -a sha256 $data"
    "sha256sum (xargs -P2)|find $data -type f -print0 | xargs -0 -P2 -n 64 sha256sum"
    "cat, one reader in path order|find $data -type f -print0 | sort -z | xargs -0 cat"
  )
  echo "| tool | command | cold s | MB/s | share of the sequential limit | disk |"
  echo "|---|---|---|---|---|---|"
  local row label cmd r out s
  for row in "${rows[@]}"; do
    label=${row%%|*}; cmd=${row#*|}
    for r in $(seq "$RUNS"); do
      out=$(cold_run "$data" "$cmd")
      s=${out%% *}
      echo "| $label | \`$cmd\` | $s | $(mbps "$bytes" "$s") | $(share "$limit" "$s") | $(echo "$out" | sed -n 's/^[^(]*(\(.*\))$/\1/p') |"
    done
  done
}

probe() {
  local data=${1:-D1}
  cold_run "$data" "$FIXITY hash -v -a $ALGO $data 2>&1 >/dev/null | grep storage: >&2" > /dev/null
}

cmd=${1:-}
[ $# -gt 0 ] && shift
case "$cmd" in
  setup)
    [ $# -gt 0 ] || set -- /tmp/fixity-bench/D1 /tmp/fixity-bench/D3
    "${MODEL}_setup" "$@"
    ;;
  seq)
    data=${1:-D1}
    s=$(seq_seconds "$data")
    echo "$MODEL model, $data: sequential limit $s s ($(mbps "$(data_bytes "$data")" "$s") MB/s)"
    ;;
  run) [ $# -ge 2 ] || die "usage: $0 run DATA CMD..."; data=$1; shift; cold_run "$data" "$*" ;;
  compare) compare "$@" ;;
  probe) probe "$@" ;;
  teardown) "${MODEL}_teardown" ;;
  *) sed -n '2,29p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
