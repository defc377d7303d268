#!/bin/sh
# absent.sh -- a rank away from acis (computing, no MPI call) for longer
# than MPIR_CVAR_OFFLOAD_TIMEOUT_MS while its offloaded nonblocking
# collective waits for late peers must not take the live switch for dead
# when it comes back: the switch's silence counts only while a rank is
# repeating.  udp only: the shared-memory channel is reliable and never
# declares silence.  With the progress helper off nothing asks for the
# absentee while it is away (the case that failed); with it on, it does.
# Then a waiter descheduled between its read of the channel and its look
# at the clock (MPIR_CVAR_OFFLOAD_FAULT_STALL_MS, longer than the
# timeout): the answer that came meanwhile is unread and must be found by
# the last look before the switch is called dead, in MPI_Wait and in a
# blocking call; the helper is off so that nothing else reads it.
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
for mode in nonblocking blocking; do
    for np in 2 4; do
        note "a waiter stalled 1000 ms after its read, switch timeout 500 ms, $np ranks, $mode"
        MPIR_CVAR_OFFLOAD_PROGRESS_US=0 MPIR_CVAR_OFFLOAD_FAULT_STALL_MS=1000 \
            ACIS_TEST_TIMEOUT=${ACIS_TEST_TIMEOUT:-120} \
            run_mpi $np "$TESTS_DIR/absent" --rounds=2 --away-ms=300 --mode=$mode ||
            fail "stalled waiter, $np ranks, $mode"
    done
done
