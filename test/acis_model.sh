#!/bin/sh
# acis_model.sh -- acis-model as a user runs it: the default sweep is one
# CSV row per collective, process count and size, with positive times
# and speedups that are their quotient; the MPICH algorithm changes at
# MPICH's thresholds; the seed's table comes out for 32/64/128 nodes; a
# torus and a star are accepted, a torus that does not hold P is not;
# every malformed option is named with what is allowed and exits 2; the
# plot is a PNG drawn by gnuplot.
. "${top_srcdir:-.}/test/mpi/common.sh"
MODEL="$top_builddir/tools/acis-model"

note "default sweep"
"$MODEL" >"$TMPD/all.csv" || fail "acis-model failed"
head -1 "$TMPD/all.csv" | grep -qx \
    'collective,ranks,bytes,topology,software_algorithm,software_us,inswitch_us,speedup' ||
    fail "CSV header: $(head -1 "$TMPD/all.csv")"
rows=$(($(wc -l <"$TMPD/all.csv") - 1))
[ "$rows" -eq $((8 * 16 * 21)) ] || fail "$rows rows, want 8 collectives x 16 P x 21 sizes"
awk -F, 'function abs(x) { return x < 0 ? -x : x }
    NR > 1 && ($6 <= 0 || $7 <= 0 || abs($8 - $6 / $7) > 0.001 * $8 + 0.001) {
    print; bad = 1 } END { exit bad }' "$TMPD/all.csv" || fail "a row's times or speedup"
grep -q '^allreduce,8,1024,fattree:32,recursive_doubling,' "$TMPD/all.csv" &&
    grep -q '^allreduce,8,4096,fattree:32,reduce_scatter_allgather,' "$TMPD/all.csv" ||
    fail "allreduce does not switch algorithm at 2 KiB"

note "table for the seed's node counts"
"$MODEL" --table >"$TMPD/table.md" || fail "acis-model --table failed"
grep -q '^| collective | P=32, <=4 KB | P=32, >4 KB | P=64' "$TMPD/table.md" ||
    { cat "$TMPD/table.md"; fail "table header"; }
[ "$(grep -c '^| [a-z_]* | [0-9]' "$TMPD/table.md")" -eq 8 ] || fail "table rows"
grep -q 'seed 000 fig. 3-9: 2.0x-32.6x' "$TMPD/table.md" || fail "table footer"

note "other topologies and a CSV file"
"$MODEL" --topology torus:2x2x1 --procs 4 --sizes 8 --colls barrier --csv "$TMPD/t.csv" ||
    fail "torus:2x2x1 at 4 processes"
grep -q '^barrier,4,8,torus:2x2x1,dissemination,' "$TMPD/t.csv" || fail "torus row"
"$MODEL" --topology star --procs 2:8 --sizes 1:4 >/dev/null || fail "star"

note "malformed options"
bad() {
    what=$1; shift
    "$MODEL" "$@" >"$TMPD/out" 2>"$TMPD/err" && fail "accepted $*"
    [ $? -eq 2 ] || fail "$* did not exit 2"
    grep -q -- "$what" "$TMPD/err" || { cat "$TMPD/err"; fail "$* not explained"; }
}
bad "bad --procs '0'" --procs 0
bad "allowed: N,N" --sizes 8,x
bad "bad --latency '-3'" --latency -3
bad "bad --bandwidth '0'" --bandwidth 0
bad "allowed: star, fattree" --topology mesh
bad "allowed: a list of allreduce" --colls alltoall
bad "unknown option" --frobnicate 1
bad "does not hold 8" --topology torus:2x2x1 --procs 8

note "plot"
command -v gnuplot >/dev/null || fail "gnuplot is missing (scripts/deps installs it)"
"$MODEL" --procs 2:1024 --plot "$TMPD/m.png" || fail "acis-model --plot failed"
[ "$(head -c 4 "$TMPD/m.png" | od -An -c | tr -d ' ')" = '211PNG' ] || fail "not a PNG"
note "ok"
