#!/bin/sh
# acis_model.sh -- acis-model as a user runs it: the default sweep is one
# CSV row per collective, process count and size, with positive times
# and speedups that are their quotient; the MPICH algorithm changes
# where MPICH 4.0.2's tuning file changes it (allreduce at as many
# elements as ranks, bcast's ring above 512 KiB), and --type-size moves
# the allreduce switch; those rules are the ones the installed libmpich
# carries in its tuning files; the seed's table comes out for 32/64/128 nodes; a
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
grep -q '^allreduce,8,32,fattree:32,recursive_doubling,' "$TMPD/all.csv" &&
    grep -q '^allreduce,8,64,fattree:32,reduce_scatter_allgather,' "$TMPD/all.csv" ||
    fail "allreduce does not switch algorithm at 8 doubles on 8 ranks"
grep -q '^bcast,65536,524288,fattree:32,scatter_recursive_doubling_allgather,' "$TMPD/all.csv" &&
    grep -q '^bcast,65536,1048576,fattree:32,scatter_ring_allgather,' "$TMPD/all.csv" ||
    fail "bcast does not switch to the ring above 512 KiB"
"$MODEL" --type-size 4 --procs 8 --sizes 32 --colls allreduce |
    grep -q '^allreduce,8,32,fattree:32,reduce_scatter_allgather,' ||
    fail "--type-size 4 does not count 8 floats in 32 bytes"

note "the rules the model follows are the installed MPICH's own"
# libmpich carries its tuning files as JSON text (maint/tuning/coll/ch4/
# generic.json and mpir/generic.json); these are their rules for the
# eight collectives on a communicator with one process per node (no node
# hierarchy, built-in commutative op), in the order MPICH tries them.
# tools/model.c encodes exactly these; check_model asserts its choices.
lib=$(ldconfig -p | awk '/libmpich\.so\.12 /{ print $NF; exit }')
[ -n "$lib" ] || fail "libmpich.so.12 not found (Debian: libmpich12)"
rules() {   # $1: an algorithm name only that file holds
    strings -n 1000 "$lib" | grep -m1 "$1" |
        jq -r 'paths(type == "object" and length == 0) | join("/")' |
        grep -E '^collective=(bcast|allreduce|reduce|allgather|gather|scatter|reduce_scatter|barrier)/' |
        grep -Ev 'comm_hierarchy=parent|avg_msg_size<=0|is_op_built_in=no|is_commutative=no|node_comm_size|comm_type=inter'
}
rules MPIDI_Bcast_intra_composition_gamma >"$TMPD/ch4.rules" || fail "no ch4 tuning in $lib"
cat >"$TMPD/ch4.want" <<'RULES'
collective=bcast/comm_type=intra/comm_hierarchy=any/composition=MPIDI_Bcast_intra_composition_gamma
collective=allreduce/comm_type=intra/comm_size=any/comm_hierarchy=any/composition=MPIDI_Allreduce_intra_composition_beta
collective=reduce/comm_type=intra/comm_hierarchy=any/composition=MPIDI_Reduce_intra_composition_gamma
collective=barrier/comm_type=intra/comm_hierarchy=any/composition=MPIDI_Barrier_intra_composition_beta
collective=gather/comm_type=intra/composition=MPIDI_Gather_intra_composition_alpha
collective=scatter/comm_type=intra/composition=MPIDI_Scatter_intra_composition_alpha
collective=allgather/comm_type=intra/composition=MPIDI_Allgather_intra_composition_alpha
collective=reduce_scatter/comm_type=intra/composition=MPIDI_Reduce_scatter_intra_composition_alpha
RULES
diff "$TMPD/ch4.want" "$TMPD/ch4.rules" || fail "ch4's tuning in $lib is not what the model reads"
rules MPIR_Bcast_intra_binomial >"$TMPD/mpir.rules" || fail "no MPIR tuning in $lib"
cat >"$TMPD/mpir.want" <<'RULES'
collective=bcast/comm_type=intra/comm_size<8/comm_hierarchy=any/avg_msg_size=any/algorithm=MPIR_Bcast_intra_binomial
collective=bcast/comm_type=intra/comm_size=pow2/comm_hierarchy=any/avg_msg_size<=12288/algorithm=MPIR_Bcast_intra_binomial
collective=bcast/comm_type=intra/comm_size=pow2/comm_hierarchy=any/avg_msg_size<=524288/algorithm=MPIR_Bcast_intra_scatter_recursive_doubling_allgather
collective=bcast/comm_type=intra/comm_size=pow2/comm_hierarchy=any/avg_msg_size=any/algorithm=MPIR_Bcast_intra_scatter_ring_allgather
collective=bcast/comm_type=intra/comm_size=any/comm_hierarchy=any/avg_msg_size<=12288/algorithm=MPIR_Bcast_intra_binomial
collective=bcast/comm_type=intra/comm_size=any/comm_hierarchy=any/avg_msg_size=any/algorithm=MPIR_Bcast_intra_scatter_ring_allgather
collective=allreduce/comm_type=intra/avg_msg_size<=8/algorithm=MPIR_Allreduce_intra_recursive_doubling
collective=allreduce/comm_type=intra/avg_msg_size=any/is_op_built_in=yes/count<pow2/algorithm=MPIR_Allreduce_intra_recursive_doubling
collective=allreduce/comm_type=intra/avg_msg_size=any/is_op_built_in=yes/count=any/algorithm=MPIR_Allreduce_intra_reduce_scatter_allgather
collective=allgather/comm_type=intra/comm_size=pow2/total_msg_size<524288/algorithm=MPIR_Allgather_intra_recursive_doubling
collective=allgather/comm_type=intra/comm_size=pow2/total_msg_size=any/algorithm=MPIR_Allgather_intra_ring
collective=allgather/comm_type=intra/comm_size=any/total_msg_size<81920/algorithm=MPIR_Allgather_intra_brucks
collective=allgather/comm_type=intra/comm_size=any/total_msg_size=any/algorithm=MPIR_Allgather_intra_ring
collective=reduce/comm_type=intra/comm_hierarchy=any/avg_msg_size<=2048/algorithm=MPIR_Reduce_intra_binomial
collective=reduce/comm_type=intra/comm_hierarchy=any/avg_msg_size=any/is_op_built_in=yes/count<pow2/algorithm=MPIR_Reduce_intra_binomial
collective=reduce/comm_type=intra/comm_hierarchy=any/avg_msg_size=any/is_op_built_in=yes/count=any/algorithm=MPIR_Reduce_intra_reduce_scatter_gather
collective=reduce_scatter/comm_type=intra/is_commutative=yes/total_msg_size<524288/algorithm=MPIR_Reduce_scatter_intra_recursive_halving
collective=reduce_scatter/comm_type=intra/is_commutative=yes/total_msg_size=any/algorithm=MPIR_Reduce_scatter_intra_pairwise
collective=gather/comm_type=intra/algorithm=MPIR_Gather_intra_binomial
collective=scatter/comm_type=intra/algorithm=MPIR_Scatter_intra_binomial
collective=barrier/comm_type=intra/comm_hierarchy=any/algorithm=MPIR_Barrier_intra_dissemination
RULES
diff "$TMPD/mpir.want" "$TMPD/mpir.rules" || fail "MPIR's tuning in $lib is not what the model reads"

note "table for the seed's node counts"
"$MODEL" --table >"$TMPD/table.md" || fail "acis-model --table failed"
grep -q '^| collective | P=32, <=4 KB | P=32, >4 KB | P=64' "$TMPD/table.md" ||
    { cat "$TMPD/table.md"; fail "table header"; }
[ "$(grep -c '^| [a-z_]* | [0-9]' "$TMPD/table.md")" -eq 8 ] || fail "table rows"
grep -q 'seed 000 fig. 3-9: 2.0x-32.6x' "$TMPD/table.md" || fail "table footer"

note "the figures docs/performance.md quotes"
awk '/^## acis-model beside seed 000 fig. 3-9/ { f = 1; next } /^## / { f = 0 } f' \
    "$top_srcdir/docs/performance.md" >"$TMPD/sec.md"
[ -s "$TMPD/sec.md" ] || fail "docs/performance.md has no acis-model section"
grep '^| ' "$TMPD/table.md" >"$TMPD/want.rows"
grep '^| ' "$TMPD/sec.md" | diff "$TMPD/want.rows" - || fail "the doc's table is not --table's"
range() { sed -n 's/.*; range \([0-9.x-]*\) (seed.*/\1/p' "$1"; }
"$MODEL" --table --topology torus >"$TMPD/torus.md" || fail "--table --topology torus"
for r in "$(range "$TMPD/table.md")" "$(range "$TMPD/torus.md")"; do
    [ -n "$r" ] && grep -qF "$r" "$TMPD/sec.md" || fail "the doc does not give range '$r'"
done
# speedups grow with P, but gather's and scatter's above 4 KB fall; they
# grow with size but allgather's, gather's and scatter's fall
awk -F'|' '/^\| [a-z_]+ \| [0-9]/ {
    c = $2; gsub(/ /, "", c); for (i = 3; i <= 8; i++) v[i] = $i + 0
    if (!(v[3] <= v[5] && v[5] <= v[7])) bad = bad " " c ":P,small"
    up = v[4] <= v[6] && v[6] <= v[8]
    if ((c == "gather" || c == "scatter") ? up : !up) bad = bad " " c ":P,large"
    for (i = 3; i <= 7; i += 2)
        if ((c == "allgather" || c == "gather" || c == "scatter") ? v[i + 1] >= v[i] : v[i + 1] < v[i])
            bad = bad " " c ":size"
} END { if (bad != "") { print "trend broken:" bad; exit 1 } }' "$TMPD/table.md" ||
    fail "the trends the doc states"
# software and acis times at 1 KB and 1 MB on 32 and 128 nodes
for o in 14.8 1; do
    "$MODEL" --procs 32,64,128 --sizes 1024 --overhead $o \
        --colls allgather,allreduce,bcast,gather,reduce,reduce_scatter,scatter
done | awk -F, '$1 != "collective" { k = NR > 22; if (!(k in lo) || $6 < lo[k]) lo[k] = $6
        if ($6 > hi[k]) hi[k] = $6 }
    END { printf "%.0f-%.0f µs\n(%.0f-%.0f\n", lo[0], hi[0], lo[1], hi[1] }' >"$TMPD/kb"
"$MODEL" --procs 32,128 --sizes 1048576 --colls allreduce,bcast,gather |
    awk -F, 'NR > 1 { sw[$1] = sw[$1] (sw[$1] == "" ? "" : " / ") sprintf("%.0f", $6)
                      is[$1] = is[$1] (is[$1] == "" ? "" : " / ") sprintf("%.0f", $7) }
        END { print "MPICH " sw["allreduce"] ", acis " is["allreduce"]
              print "(" sw["bcast"] ")"; print "MPICH " sw["gather"]; print "acis " is["gather"] }' \
    >>"$TMPD/kb"
while IFS= read -r q; do
    grep -qF -- "$q" "$TMPD/sec.md" || fail "the doc does not say '$q'"
done <"$TMPD/kb"

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
bad "bad --type-size '0'" --type-size 0
bad "allowed: star, fattree" --topology mesh
bad "allowed: a list of allreduce" --colls alltoall
bad "unknown option" --frobnicate 1
bad "does not hold 8" --topology torus:2x2x1 --procs 8

note "plot"
command -v gnuplot >/dev/null || fail "gnuplot is missing (scripts/deps installs it)"
"$MODEL" --procs 2:1024 --plot "$TMPD/m.png" || fail "acis-model --plot failed"
[ "$(head -c 4 "$TMPD/m.png" | od -An -c | tr -d ' ')" = '211PNG' ] || fail "not a PNG"
note "ok"
