#!/bin/sh
# comm_setup.sh -- switch table rows over communicators' lives, lazily and
# eagerly set up, at 2 and 4 ranks, with a 6-row table (comm_setup); a
# nonblocking collective before a communicator's first blocking one.
. "${top_srcdir:-.}/test/mpi/common.sh"
export MPIR_CVAR_OFFLOAD=on MPIR_CVAR_OFFLOAD_SWITCH_TABLES=6
export ACIS_TEST_TIMEOUT=120     # a hang (a nonblocking call that waits) fails soon

for np in 2 4; do
    note "lazy set-up, $np ranks"
    run_mpi $np "$TESTS_DIR/comm_setup" || fail "lazy, $np ranks"
    note "eager set-up, $np ranks"
    MPIR_CVAR_OFFLOAD_COMM_SETUP=eager run_mpi $np "$TESTS_DIR/comm_setup" --eager ||
        fail "eager, $np ranks"
done
