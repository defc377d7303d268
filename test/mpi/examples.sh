#!/bin/sh
# examples.sh -- the programs of examples/ run as a user would run them:
# subcomm (row and column communicators) at 4 ranks and overlap
# (Iallreduce behind computation) at 2, both unmodified binaries with
# libacis preloaded, must say "correct" and show offloaded calls in the
# statistics table; two-jobs.sh runs two jobs against one acis-switchd,
# whose rows and each job's offloaded calls must show both were served.
. "${top_srcdir:-.}/test/mpi/common.sh"
export MPIR_CVAR_OFFLOAD=on MPIR_CVAR_OFFLOAD_STATS=1

offloaded() {    # offloaded FILE COLL: the offloaded column of COLL's row
    awk -v c="$2" '$2 == c { print $4 }' "$1"
}

note "subcomm, 4 ranks"
LD_PRELOAD=$PRELOAD run_mpi 4 "$top_builddir/examples/subcomm" >"$TMPD/s" 2>&1 ||
    { cat "$TMPD/s"; fail "subcomm"; }
cat "$TMPD/s"
grep -q '(correct)' "$TMPD/s" || fail "subcomm: wrong result"
[ "$(offloaded "$TMPD/s" MPI_Allreduce)" -gt 0 ] && [ "$(offloaded "$TMPD/s" MPI_Bcast)" -gt 0 ] ||
    fail "subcomm: the row and column collectives were not offloaded"

note "overlap, 2 ranks"
LD_PRELOAD=$PRELOAD run_mpi 2 "$top_builddir/examples/overlap" 131072 >"$TMPD/o" 2>&1 ||
    { cat "$TMPD/o"; fail "overlap"; }
cat "$TMPD/o"
grep -q 'result correct' "$TMPD/o" || fail "overlap: wrong result"
[ "$(offloaded "$TMPD/o" MPI_Iallreduce)" -gt 0 ] || fail "overlap: Iallreduce not offloaded"

note "two jobs, one acis-switchd"
MPIEXEC=$MPIEXEC ACIS_PRELOAD=$PRELOAD "$top_srcdir/examples/two-jobs.sh" "$top_builddir" >"$TMPD/t" 2>&1 ||
    { cat "$TMPD/t"; fail "two-jobs.sh"; }
cat "$TMPD/t"
rows=$(awk '$1 == "tables_created" { print $2 }' "$TMPD/t")
[ "${rows:-0}" -ge 3 ] || fail "two-jobs.sh: the switch made fewer rows than the two jobs need"
[ "$(offloaded "$TMPD/t" MPI_Allreduce)" -gt 0 ] && [ "$(offloaded "$TMPD/t" MPI_Iallreduce)" -gt 0 ] ||
    fail "two-jobs.sh: a job offloaded nothing through the shared switch"
grep -q '(correct)' "$TMPD/t" && grep -q 'result correct' "$TMPD/t" || fail "two-jobs.sh: a wrong result"
