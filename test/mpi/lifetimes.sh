#!/bin/sh
# lifetimes.sh -- nonblocking collectives whose datatype, op and
# communicator are freed before they complete (lifetimes), at 2, 4 and 8
# ranks (one iteration at 8: more ranks than cores).
. "${top_srcdir:-.}/test/mpi/common.sh"
export MPIR_CVAR_OFFLOAD=on
for np in 2 4; do
    note "objects freed before completion, $np ranks"
    ACIS_TEST_TIMEOUT=${ACIS_TEST_TIMEOUT:-120} run_mpi $np "$TESTS_DIR/lifetimes" ||
        fail "lifetimes, $np ranks"
done
note "objects freed before completion, 8 ranks"
ACIS_TEST_TIMEOUT=${ACIS_TEST_TIMEOUT:-180} run_mpi 8 "$TESTS_DIR/lifetimes" --iters=1 ||
    fail "lifetimes, 8 ranks"
