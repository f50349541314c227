#!/bin/bash
# usage: bench/pg-sqlite.sh ROUNDS BIN [BIN2 ...]: SQLite and PostgreSQL side by side on D3 (issue 27);
# needs the cluster of docs/benchmarks.md (socket /tmp/pgs/sock, port 5527)
R=${1:-3}; shift
D=${D:-/tmp/fixity-bench/D3}
B=/usr/lib/postgresql/15/bin; S=/tmp/pgs/sock; PORT=5527
U="postgresql://postgres@%2Ftmp%2Fpgs%2Fsock:$PORT/fixity"
t() { /usr/bin/time -f "%e %M" "$@" 2>&1 >/dev/null | tail -1; }
for r in $(seq $R); do
  for F in "$@"; do
    n=$(basename $F)
    rm -f /tmp/pgs/sqlite.db*
    runuser -u postgres -- $B/dropdb -h $S -p $PORT --if-exists fixity; runuser -u postgres -- $B/createdb -h $S -p $PORT fixity
    echo "$n sqlite scan   $(t $F scan -q --catalog /tmp/pgs/sqlite.db $D)"
    echo "$n pg     scan   $(t $F scan -q --catalog $U $D)"
    echo "$n sqlite rescan $(t $F scan -q --catalog /tmp/pgs/sqlite.db $D)"
    echo "$n pg     rescan $(t $F scan -q --catalog $U $D)"
    echo "$n sqlite verify $(t $F verify -q --catalog /tmp/pgs/sqlite.db $D)"
    echo "$n pg     verify $(t $F verify -q --catalog $U $D)"
    echo "$n sqlite verify2 $(t $F verify -q --catalog /tmp/pgs/sqlite.db $D)"
    echo "$n pg     verify2 $(t $F verify -q --catalog $U $D)"
  done
done
