#!/bin/sh
# quick.sh -- the quick path (test/mpi/quick.c): broadcasts, scatters,
# gathers and reductions of shapes seen before, a derived datatype's
# handle given to another type, a communicator's handle to another
# communicator.  On shm every call on a predefined type must be offloaded
# and on the short path, and repeated reductions on the quick path (the
# counters); with MPIR_CVAR_OFFLOAD_SHORT_PATH=0 and on udp the
# values must be right all the same.  2 ranks (quick.c takes any number).
. "${top_srcdir:-.}/test/mpi/common.sh"
export MPIR_CVAR_OFFLOAD=on ACIS_TEST_TIMEOUT=${ACIS_TEST_TIMEOUT:-120}

note "shm, 2 ranks: offloaded, on the short path"
MPIR_CVAR_OFFLOAD_DEVICE=shm run_mpi 2 "$TESTS_DIR/quick" --expect-offload --expect-quick ||
    fail "shm"
note "shm, 2 ranks, VERBOSE=1: the same calls the ordinary way"
MPIR_CVAR_OFFLOAD_DEVICE=shm MPIR_CVAR_OFFLOAD_VERBOSE=1 \
    run_mpi 2 "$TESTS_DIR/quick" --expect-offload >/dev/null 2>&1 || fail "shm, verbose"
note "shm, 2 ranks, MPIR_CVAR_OFFLOAD_SHORT_PATH=0"
MPIR_CVAR_OFFLOAD_DEVICE=shm MPIR_CVAR_OFFLOAD_SHORT_PATH=0 run_mpi 2 "$TESTS_DIR/quick" ||
    fail "shm, short path off"
note "udp, 2 ranks"
MPIR_CVAR_OFFLOAD_DEVICE=udp run_mpi 2 "$TESTS_DIR/quick" || fail "udp"
exit 0
