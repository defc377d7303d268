#!/bin/sh
# preload.sh -- an OSU-style program built without libacis runs correctly
# with LD_PRELOAD=libacis.so, and the statistics table proves acis saw its
# calls.
. "${top_srcdir:-.}/test/mpi/common.sh"

prog="$TESTS_DIR/osu_like"
[ -f "$LIBACIS" ] || fail "no $LIBACIS"
if ldd "$prog" 2>/dev/null | grep -q libacis; then
    fail "osu_like must not be linked with libacis"
fi
for coll in allreduce reduce bcast barrier; do
    LD_PRELOAD="$PRELOAD" MPIR_CVAR_OFFLOAD_STATS=1 run_mpi 2 "$prog" -t $coll -m 4096 -i 20 \
        >"$TMPD/out" 2>"$TMPD/err" || { cat "$TMPD/out" "$TMPD/err"; fail "$coll failed"; }
    name=$(echo "$coll" | sed 's/^./\U&/')
    row=$(grep "^acis: MPI_$name " "$TMPD/err") ||
        { cat "$TMPD/err"; fail "no statistics row for MPI_$name: not intercepted"; }
    # calls, offloaded: with the embedded switch every call is offloaded
    echo "$row" | awk '{ exit !($3 > 0 && $3 == $4) }' ||
        fail "MPI_$name not offloaded: $row"
    echo "ok: $coll preloaded: $(grep "^acis: MPI_$name " "$TMPD/err")"
done
# Without the preload there is no acis at all.
run_mpi 2 "$prog" -t allreduce -m 64 -i 5 >"$TMPD/out" 2>"$TMPD/err" || fail "plain run failed"
grep -q '^acis' "$TMPD/err" && fail "acis output without LD_PRELOAD"
echo "ok: plain run untouched"
