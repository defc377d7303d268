#!/bin/sh
# stress.sh -- random nonblocking collectives on 4 communicators with a
# window of 20 outstanding requests, point-to-point traffic, every
# completion function and short sleeps (stress): 2 ranks, 4 ranks on both
# channels, and 8 ranks for one round.  make check uses seeds 7 and
# 1795452877 (which hung at 4 ranks before MPI_Wait on an acis request
# moved MPICH too); ACIS_STRESS_SEED picks one (0: a new one per run),
# ACIS_STRESS_ITERS more rounds.
. "${top_srcdir:-.}/test/mpi/common.sh"
export MPIR_CVAR_OFFLOAD=on
ITERS=${ACIS_STRESS_ITERS:-3}
stress() {    # NP DEVICE SEED ROUNDS
    note "stress, $1 ranks, $2, seed $3"
    MPIR_CVAR_OFFLOAD_DEVICE=$2 ACIS_TEST_TIMEOUT=${ACIS_TEST_TIMEOUT:-180} \
        run_mpi $1 "$TESTS_DIR/stress" --iters=$4 --seed=$3 ||
        fail "stress, $1 ranks, $2, seed $3"
}
for seed in ${ACIS_STRESS_SEED:-7 1795452877}; do
    stress 2 auto $seed $ITERS
    stress 4 shm $seed $ITERS
    stress 4 udp $seed $ITERS
done
# The 8-rank step hung under ASan in about one run of four (2026-11-28):
# a member in MPI_Wait on a nonblocking call on the short path polled only
# acis, so a peer's large send to it, which that peer had to finish before
# starting the call, never moved (nbshort.c's needs_mpich is the case).
stress 8 auto ${ACIS_STRESS_SEED:-7} 1
