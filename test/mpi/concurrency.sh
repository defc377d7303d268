#!/bin/sh
# concurrency.sh -- offloaded collectives in flight together: nonblocking
# ones mixed with MPICH's requests on one and several communicators
# (nbc_check), and MPI_THREAD_MULTIPLE with two threads per rank on their
# own communicators (threads), at 2 and 4 ranks; and derived datatypes
# through the switch (dtype_check); on both channels, shm and udp.
. "${top_srcdir:-.}/test/mpi/common.sh"
export MPIR_CVAR_OFFLOAD=on

for dev in shm udp; do
    export MPIR_CVAR_OFFLOAD_DEVICE=$dev
    for np in 2 3 4; do
        note "$dev: derived datatypes, $np ranks"
        run_mpi $np "$TESTS_DIR/dtype_check" || fail "$dev: dtype_check, $np ranks"
    done
    for np in 2 4; do
        note "$dev: nonblocking, mixed requests, $np ranks"
        run_mpi $np "$TESTS_DIR/nbc_check" || fail "$dev: nbc_check, $np ranks"
        note "$dev: MPI_THREAD_MULTIPLE, $np ranks"
        run_mpi $np "$TESTS_DIR/threads" || fail "$dev: threads, $np ranks"
    done
done
unset MPIR_CVAR_OFFLOAD_DEVICE
note "small window: many nonblocking collectives share 4 slots"
MPIR_CVAR_OFFLOAD_SWITCH_PAYLOAD=1000 MPIR_CVAR_OFFLOAD_SWITCH_SLOTS=128 \
    run_mpi 2 "$TESTS_DIR/nbc_check" || fail "nbc_check, small window"
