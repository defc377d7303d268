#!/bin/sh
# stress.sh -- random nonblocking collectives on 4 communicators with a
# window of 20 outstanding requests, point-to-point traffic, every
# completion function and short sleeps (stress), at 2 ranks.
# ACIS_STRESS_RANKS="4 8" ACIS_STRESS_ITERS=50 run it wider and longer by
# hand: at 4 ranks it still hangs now and then (seeds 7, 1795452877), an
# open bug described in docs/reliability.md, so make check does not run it
# there yet.  make check uses seed 7 (ACIS_STRESS_SEED changes it;
# ACIS_STRESS_SEED=0 picks one per run).
. "${top_srcdir:-.}/test/mpi/common.sh"
export MPIR_CVAR_OFFLOAD=on
SEED=--seed=${ACIS_STRESS_SEED:-7}
for np in ${ACIS_STRESS_RANKS:-2}; do
    note "stress, $np ranks"
    ACIS_TEST_TIMEOUT=${ACIS_TEST_TIMEOUT:-120} \
        run_mpi $np "$TESTS_DIR/stress" --iters=${ACIS_STRESS_ITERS:-3} $SEED ||
        fail "stress, $np ranks"
done
