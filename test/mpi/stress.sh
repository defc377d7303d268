#!/bin/sh
# stress.sh -- random nonblocking collectives on 4 communicators with a
# window of 20 outstanding requests, point-to-point traffic, every
# completion function and short sleeps (stress), at 2 and 4 ranks, and at
# 8 ranks with few rounds.  ACIS_STRESS_RANKS="5 10" ACIS_STRESS_ITERS=50
# run it longer and wider by hand; ACIS_STRESS_SEED repeats a run.
. "${top_srcdir:-.}/test/mpi/common.sh"
export MPIR_CVAR_OFFLOAD=on
SEED=${ACIS_STRESS_SEED:+--seed=$ACIS_STRESS_SEED}
for np in ${ACIS_STRESS_RANKS:-2 4}; do
    note "stress, $np ranks"
    ACIS_TEST_TIMEOUT=${ACIS_TEST_TIMEOUT:-120} \
        run_mpi $np "$TESTS_DIR/stress" --iters=${ACIS_STRESS_ITERS:-3} $SEED ||
        fail "stress, $np ranks"
done
note "stress, 8 ranks, one round"
ACIS_TEST_TIMEOUT=${ACIS_TEST_TIMEOUT:-180} run_mpi 8 "$TESTS_DIR/stress" --iters=1 $SEED ||
    fail "stress, 8 ranks"
