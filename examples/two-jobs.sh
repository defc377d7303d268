#!/bin/sh
# two-jobs.sh -- two MPI jobs sharing one acis-switchd: the switch keeps
# them apart by job key and gives each its own table rows; each job's
# statistics show its offloaded calls, the switch's counters the rows of
# both.  Runs examples/subcomm and examples/overlap from the build
# tree (argument: the build directory, default build), 2 ranks each,
# preloading libacis into the unmodified binaries (ACIS_PRELOAD overrides
# what is preloaded).
set -eu
B=${1:-build}
PRELOAD=${ACIS_PRELOAD:-$B/.libs/libacis.so}
MPIEXEC=${MPIEXEC:-mpiexec.mpich}
out=$(mktemp -d)
trap 'kill $sw 2>/dev/null; rm -rf "$out"' EXIT
"$B/src/switch/acis-switchd" --listen 127.0.0.1:0 >"$out/sw" 2>&1 &
sw=$!
for i in $(seq 50); do
    addr=$(sed -n 's/^acis-switchd: listening on //p' "$out/sw")
    [ -n "$addr" ] && break
    sleep 0.1
done
[ -n "$addr" ] || { echo "two-jobs: acis-switchd did not start" >&2; exit 1; }
echo "== one acis-switchd at $addr, two jobs at once"
export MPIR_CVAR_OFFLOAD_SWITCH=$addr MPIR_CVAR_OFFLOAD_STATS=1
LD_PRELOAD=$PRELOAD "$MPIEXEC" -n 2 "$B/examples/subcomm" >"$out/a" 2>&1 &
a=$!
LD_PRELOAD=$PRELOAD "$MPIEXEC" -n 2 "$B/examples/overlap" 262144 >"$out/b" 2>&1 &
b=$!
wait $a && wait $b || { cat "$out/a" "$out/b"; exit 1; }
echo "-- job A"; cat "$out/a"
echo "-- job B"; cat "$out/b"
echo "-- the switch"
"$B/tools/acis-info" --switch "$addr" |
    awk '$1 ~ /^(tables_created|segments|seg_allreduce|drop_foreign|drop_spoofed)$/'
