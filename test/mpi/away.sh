#!/bin/sh
# away.sh -- a rank blocked in MPICH while its large offloaded nonblocking
# collective still has segments to send, and a rank waiting in acis while
# a peer needs its MPICH progress (away), on both channels at 2 and 4
# ranks.  Without the progress helper (MPIR_CVAR_OFFLOAD_PROGRESS_US=0)
# the first case hangs; the test asks the counters that the helper ran.
. "${top_srcdir:-.}/test/mpi/common.sh"
export MPIR_CVAR_OFFLOAD=on
for dev in shm udp; do
    for np in 2 4; do
        note "away from acis, $dev, $np ranks"
        MPIR_CVAR_OFFLOAD_DEVICE=$dev ACIS_TEST_TIMEOUT=${ACIS_TEST_TIMEOUT:-120} \
            run_mpi $np "$TESTS_DIR/away" --need-helper=1 || fail "away, $dev, $np ranks"
    done
done
