#!/bin/sh
# nomem.sh -- nonblocking collectives in which one member has no memory
# for its data (nomem): rank 0 acts so for every offloaded call
# (MPIR_CVAR_OFFLOAD_FAULT_NOMEM and _NOMEM_NB at 1), the others do not;
# 2 and 4 ranks on both channels, 1000-byte packets.  Every rank's call
# must fail with MPI_ERR_NO_MEM, none may hang.  Then rank 0 gets no
# request from MPICH for any of its offloaded nonblocking calls
# (MPIR_CVAR_OFFLOAD_FAULT_NOMEM_REQUEST=1, nomem --mode=request): every
# call must succeed, offloaded, with MPICH's result.  Before, rank 0
# failed the call alone and the others waited for its packets forever.
. "${top_srcdir:-.}/test/mpi/common.sh"
export MPIR_CVAR_OFFLOAD=on MPIR_CVAR_OFFLOAD_SWITCH_PAYLOAD=1000 MPIR_CVAR_OFFLOAD_SHM_PAYLOAD=1000
for dev in shm udp; do
    for np in 2 4; do
        note "nomem, $dev, $np ranks, rank 0 without memory for its data"
        MPIR_CVAR_OFFLOAD_DEVICE=$dev ACIS_TEST_TIMEOUT=${ACIS_TEST_TIMEOUT:-120} \
            run_mpi 1 env MPIR_CVAR_OFFLOAD_FAULT_NOMEM=1 MPIR_CVAR_OFFLOAD_FAULT_NOMEM_NB=1 \
            "$TESTS_DIR/nomem" : -n $((np - 1)) "$TESTS_DIR/nomem" || fail "nomem, $dev, $np ranks"
        note "nomem, $dev, $np ranks, rank 0 without requests"
        MPIR_CVAR_OFFLOAD_DEVICE=$dev ACIS_TEST_TIMEOUT=${ACIS_TEST_TIMEOUT:-120} \
            run_mpi 1 env MPIR_CVAR_OFFLOAD_FAULT_NOMEM_REQUEST=1 "$TESTS_DIR/nomem" --mode=request \
            : -n $((np - 1)) "$TESTS_DIR/nomem" --mode=request || fail "nomem request, $dev, $np ranks"
    done
done
exit 0
