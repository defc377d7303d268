#!/bin/sh
# absent.sh -- a rank away from acis (computing, no MPI call) for longer
# than MPIR_CVAR_OFFLOAD_TIMEOUT_MS while its offloaded nonblocking
# collective waits for late peers must not take the live switch for dead
# when it comes back: the switch's silence counts only while a rank is
# repeating.  udp only: the shared-memory channel is reliable and never
# declares silence.  With the progress helper off nothing asks for the
# absentee while it is away (the case that failed); with it on, it does.
. "${top_srcdir:-.}/test/mpi/common.sh"
export MPIR_CVAR_OFFLOAD=on MPIR_CVAR_OFFLOAD_DEVICE=udp MPIR_CVAR_OFFLOAD_TIMEOUT_MS=500
for helper in 0 1000; do
    for np in 2 4; do
        note "a rank away 1000 ms, switch timeout 500 ms, $np ranks, helper ${helper} us"
        MPIR_CVAR_OFFLOAD_PROGRESS_US=$helper ACIS_TEST_TIMEOUT=${ACIS_TEST_TIMEOUT:-120} \
            run_mpi $np "$TESTS_DIR/absent" --rounds=2 --away-ms=1000 ||
            fail "absent, $np ranks, helper $helper"
    done
done
