#!/bin/sh
# verbose.sh -- MPIR_CVAR_OFFLOAD_VERBOSE=1 reports each distinct
# (collective, decision, reason) once per communicator, from its rank 0
# only; VERBOSE=2 from every rank; VERBOSE=0 says nothing.
. "${top_srcdir:-.}/test/mpi/common.sh"

prog="$TESTS_DIR/osu_like"
LD_PRELOAD="$PRELOAD" MPIR_CVAR_OFFLOAD_VERBOSE=1 MPIR_CVAR_OFFLOAD_DEVICE=none \
    run_mpi 2 "$prog" -t allreduce -m 1024 -i 30 >"$TMPD/out" 2>"$TMPD/err" ||
    fail "verbose run failed"
n=$(grep -c '^acis\[0\]: MPI_Allreduce on MPI_COMM_WORLD' "$TMPD/err")
[ "$n" = 1 ] || { cat "$TMPD/err"; fail "expected one MPI_Allreduce report, got $n"; }
grep -q '^acis\[1\]: MPI_Allreduce' "$TMPD/err" && fail "rank 1 reported at VERBOSE=1"
grep '^acis\[0\]: MPI_Allreduce' "$TMPD/err"

LD_PRELOAD="$PRELOAD" MPIR_CVAR_OFFLOAD_VERBOSE=2 MPIR_CVAR_OFFLOAD_DEVICE=none \
    run_mpi 2 "$prog" -t allreduce -m 64 -i 5 >"$TMPD/out" 2>"$TMPD/err" || fail "VERBOSE=2 run"
grep -q '^acis\[1\]: MPI_Allreduce on MPI_COMM_WORLD' "$TMPD/err" ||
    { cat "$TMPD/err"; fail "rank 1 silent at VERBOSE=2"; }

LD_PRELOAD="$PRELOAD" MPIR_CVAR_OFFLOAD_DEVICE=none \
    run_mpi 2 "$prog" -t allreduce -m 64 -i 5 >"$TMPD/out" 2>"$TMPD/err" || fail "quiet run"
grep -q '^acis' "$TMPD/err" && { cat "$TMPD/err"; fail "output at VERBOSE=0"; }
echo "ok: verbose reporting"
