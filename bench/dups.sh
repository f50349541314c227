#!/usr/bin/env bash
# Side-by-side timing of `fixity dups --read` and the duplicate finders fclones (its
# default metro128 and BLAKE3), jdupes and rdfind on one tree, warm cache (COLD=1: the
# page cache dropped before every run, as root).
#
#   bench/dups.sh DIR [RUNS]        # any tree
#   bench/dups.sh --generate [RUNS] # makes $OUT/dups-tree first (kept for the next run)
#
# The generated tree (DUPS_SMALL small files, 1 B to 64 KiB, and DUPS_LARGE files of 1 to
# 16 MiB; about a third of each are copies, some of equal size with other content, some
# with the same first 4 KiB and another tail, some hard links) has duplicates of every
# kind the tools must tell apart. Before timing, every tool's groups are compared (as sets
# of inodes) with fixity's; a difference is printed, not hidden.
# Prints the hyperfine table (min/median/max) and each peer's median over fixity's
# (greater than 1: fixity is faster).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
fixity=${FIXITY:-$here/../target/release/fixity}
out=${OUT:-/tmp/fixity-bench/results}
mkdir -p "$out"
if [ "${1:-}" = --generate ]; then
  dir=${TREE:-$(dirname "$out")/dups-tree}
  runs=${2:-5}
  if [ ! -d "$dir" ]; then
    python3 - "$dir" "${DUPS_SMALL:-20000}" "${DUPS_LARGE:-40}" <<'EOF'
import os, random, sys
root, small, large = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(23)
made = []
def put(rel, data):
    p = os.path.join(root, rel)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "wb") as f:
        f.write(data)
    made.append((p, data))
for i in range(small + large):
    big = i >= small
    rel = f"d{rng.randrange(40)}/s{rng.randrange(20)}/f{i}"
    if made and rng.random() < 0.33:
        put(rel, rng.choice(made[-500:] if not big else made)[1])
        continue
    n = rng.randrange(1 << 20, 16 << 20) if big else rng.choice([rng.randrange(1, 65536), 4096, 8192, 10000])
    data = os.urandom(n)
    if made and rng.random() < 0.1 and len(made[-1][1]) > 8192:
        prev = made[-1][1]
        data = prev[:4096] + os.urandom(len(prev) - 4096)
    put(rel, data)
for k in range(min(200, len(made) // 10)):
    os.link(made[k * 7][0], os.path.join(root, f"link{k}"))
EOF
  fi
else
  dir=${1:?usage: bench/dups.sh DIR [RUNS] | --generate [RUNS]}
  runs=${2:-5}
fi
dir=$(cd "$dir" && pwd)
tmp=$(mktemp -d /tmp/dups-bench.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# The tools' groups, as sorted lines of sorted "dev:ino" sets, to compare with fixity's.
inodes() { # names NUL-separated, a group ending with an empty name -> one line per group
  python3 -c '
import os, sys
data = sys.stdin.buffer.read().split(b"\0")
groups, g = [], set()
for n in data:
    if not n:
        if len(g) > 1: groups.append(" ".join(sorted(g)))
        g = set()
        continue
    st = os.lstat(n); g.add(f"{st.st_dev}:{st.st_ino}")
print("\n".join(sorted(groups)))'
}
"$fixity" dups --read --json -q "$dir" | python3 -c '
import json, sys
for l in sys.stdin:
    v = json.loads(l)
    for f in v.get("files", []):
        sys.stdout.buffer.write(bytes.fromhex(f["path_hex"]) if "path_hex" in f else f["path"].encode())
        sys.stdout.buffer.write(b"\0")
    if "files" in v: sys.stdout.buffer.write(b"\0")' | inodes > "$tmp/fixity.groups"
echo "fixity: $(wc -l < "$tmp/fixity.groups") groups" >&2
cmds=("$fixity dups --read -q '$dir'")
if command -v fclones >/dev/null; then
  fclones group --hidden --no-ignore -f fdupes "$dir" 2>/dev/null | tr '\n' '\0' | inodes > "$tmp/fclones.groups"
  cmp -s "$tmp/fixity.groups" "$tmp/fclones.groups" || echo "note: fclones finds other groups ($(wc -l < "$tmp/fclones.groups"))" >&2
  cmds+=("fclones group --hidden --no-ignore '$dir'" "fclones group --hidden --no-ignore --hash-fn blake3 '$dir'")
else
  echo "note: fclones not installed (cargo install fclones --locked)" >&2
fi
if command -v jdupes >/dev/null; then
  jdupes -r -q -0 "$dir" | inodes > "$tmp/jdupes.groups"
  cmp -s "$tmp/fixity.groups" "$tmp/jdupes.groups" || echo "note: jdupes finds other groups ($(wc -l < "$tmp/jdupes.groups"))" >&2
  cmds+=("jdupes -r -q '$dir'")
else
  echo "note: jdupes not installed (apt-get install jdupes)" >&2
fi
if command -v rdfind >/dev/null; then
  cmds+=("rdfind -dryrun true -outputname $tmp/rdfind.txt '$dir'")
else
  echo "note: rdfind not installed (apt-get install rdfind)" >&2
fi
prep=()
if [ -n "${COLD:-}" ]; then
  prep=(--prepare "sync; echo 3 > /proc/sys/vm/drop_caches")
  cache=cold
else
  cache=warm
fi
name=$(basename "$dir")
hyperfine --style basic -w 1 -r "$runs" "${prep[@]}" --export-json "$out/$name-dups.json" "${cmds[@]}" >/dev/null
python3 "$here/summarize.py" "$out/$name-dups.json" "$name" "dups --read" "$cache"
python3 - "$out/$name-dups.json" "$dir" "$tmp" <<'EOF'
import json, statistics, sys
res = json.load(open(sys.argv[1]))["results"]
med = {r["command"]: statistics.median(r["times"]) for r in res}
fx = next(v for k, v in med.items() if " dups " in k)
for k, v in med.items():
    if " dups " not in k:
        short = k.replace(f"'{sys.argv[2]}'", "DIR").replace(sys.argv[3], "TMP")
        print(f"{short}: {v / fx:.2f}x fixity's median ({v:.3f} s / {fx:.3f} s)")
EOF
