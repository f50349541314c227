#!/usr/bin/env bash
# Repair of 5% damage, timed side by side on the same PAR2 data: `fixity repair` and
# `par2 repair` (par2cmdline-turbo and par2cmdline 0.8.1), warm cache.
#
#   bench/repair.sh DIR [RUNS]
#
# DIR is copied to a scratch tree, scanned and protected by fixity (10%); then 5% of
# each file (a zeroed range in its middle, mtime kept) is damaged and kept as the damaged
# state, with the findings `fixity verify` recorded. Each timed run starts from that state. par2 repairs with the sets fixity wrote,
# one `par2 repair -B` per set. Prints the hyperfine table (min/median/max).
# Writing the damage moves each file's ctime, which fixity tells from rot (CHANGED: an
# edit whose mtime was put back, never repaired unasked), so fixity's run names the
# damaged files with --force, as a user restoring them would.
set -euo pipefail
src=$(cd "$1" && pwd) runs=${2:-3}
fixity=${FIXITY:-$(cd "$(dirname "$0")/.." && pwd)/target/release/fixity}
out=${OUT:-/tmp/fixity-bench/results}
work=$(mktemp -d /tmp/repair-bench.XXXXXX)
mkdir -p "$out"
cp -a "$src" "$work/t"
t=$work/t
"$fixity" scan -q "$t"
"$fixity" protect -q "$t"
python3 - "$t" > "$work/damaged.list" <<'PY'
import os, sys
root = sys.argv[1]
for d, dirs, files in os.walk(root):
    dirs[:] = [x for x in dirs if x != ".fixity"]
    for f in files:
        p = os.path.join(d, f)
        st = os.stat(p)
        n = st.st_size // 20
        if n == 0:
            continue
        with open(p, "r+b") as fh:
            fh.seek(st.st_size // 2 - n // 2)
            fh.write(b"\0" * n)
        os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
        print(p)
PY
# The findings recorded, as a nightly verify would have (exit 1: they are findings).
"$fixity" verify -q "$t" > /dev/null || true
cp -a "$t" "$work/damaged"
restore="rm -rf '$t' && cp -a '$work/damaged' '$t'"
turbo=$(python3 -c 'import os, par2; print(os.path.join(list(par2.__path__)[0], "binaries", "par2"))' 2>/dev/null || true)
[ -x "$turbo" ] || turbo=
cmds=(--prepare "$restore" "xargs -d '\\n' -a '$work/damaged.list' '$fixity' repair --force '$t' >/dev/null")
for p in $turbo /usr/bin/par2; do
  [ -x "$p" ] || continue
  cmds+=(--prepare "$restore" "for s in '$t'/.fixity/par2/set-*[0-9a-f].par2; do $p r -q -q -B '$t' \"\$s\" >/dev/null || exit 1; done")
done
name=$(basename "$src")
hyperfine --style basic -r "$runs" --export-json "$out/$name-repair.json" "${cmds[@]}" >/dev/null
python3 "$(dirname "$0")/summarize.py" "$out/$name-repair.json" "$name" "repair 5%" warm
# The result: every file as it was.
eval "$restore"
xargs -d '\n' -a "$work/damaged.list" "$fixity" repair --force "$t" > "$work/log" || { cat "$work/log"; exit 1; }
diff -r -x .fixity "$src" "$t" && echo "repaired tree equals the original"
rm -rf "$work"
