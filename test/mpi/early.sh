#!/bin/sh
# early.sh -- members of small broadcasts, scatters and gathers that
# return once their packet is posted (test/mpi/early.c: the others come
# late, early members overwrite their buffers at once, members that pack
# and unpack, other collectives right after, a communicator freed at
# once).  On shm at 2 and 4 ranks the counters must show early returns;
# with MPIR_CVAR_OFFLOAD_EARLY_RETURN=0, and on udp, none.  Then members
# without memory for their data (MPIR_CVAR_OFFLOAD_FAULT_NOMEM on every
# rank but the root, then on the root alone): they must not abstain, since
# nobody would redo the call with a member that has returned; they borrow
# the call's own bytes.  Before, such a member abstained and the job hung
# or failed.
. "${top_srcdir:-.}/test/mpi/common.sh"
export MPIR_CVAR_OFFLOAD=on ACIS_TEST_TIMEOUT=${ACIS_TEST_TIMEOUT:-120}

for np in 2 4; do
    note "shm, $np ranks: roots return early"
    MPIR_CVAR_OFFLOAD_DEVICE=shm run_mpi $np "$TESTS_DIR/early" --expect-early ||
        fail "shm, $np ranks"
done
note "shm, 2 ranks, MPIR_CVAR_OFFLOAD_EARLY_RETURN=0: no root returns early"
MPIR_CVAR_OFFLOAD_DEVICE=shm MPIR_CVAR_OFFLOAD_EARLY_RETURN=0 \
    run_mpi 2 "$TESTS_DIR/early" --expect-none || fail "shm, early returns off"
note "udp, 2 ranks: no root returns early"
MPIR_CVAR_OFFLOAD_DEVICE=udp run_mpi 2 "$TESTS_DIR/early" --expect-none || fail "udp"

# nomem WHAT NP SHORT: early.c at NP ranks, rank 0 (every root) or the
# others (SHORT = root or leaves) without memory for half their data
nomem() {
    root_env= leaf_env=
    if [ "$3" = root ]; then root_env=MPIR_CVAR_OFFLOAD_FAULT_NOMEM=0.5
    else leaf_env=MPIR_CVAR_OFFLOAD_FAULT_NOMEM=0.5; fi
    MPIR_CVAR_OFFLOAD_DEVICE=shm MPIR_CVAR_OFFLOAD_VERBOSE=2 \
        timeout -k 10 "$ACIS_TEST_TIMEOUT" "$MPIEXEC" \
        -n 1 env $root_env "$TESTS_DIR/early" --expect-early : \
        -n $(($2 - 1)) env $leaf_env "$TESTS_DIR/early" >"$TMPD/out" 2>"$TMPD/err"
    rc=$?
    cat "$TMPD/out"
    [ $rc = 0 ] || { grep -v 'never abstains' "$TMPD/err" | tail -20; fail "$1"; }
    grep -q "no memory for this rank's data; it uses the call's own" "$TMPD/err" ||
        fail "$1: nobody borrowed"
}
for np in 2 4; do
    for short in leaves root; do
        note "shm, $np ranks: $short without memory for half their data"
        nomem "$short without memory, $np ranks" $np $short
    done
done
exit 0
