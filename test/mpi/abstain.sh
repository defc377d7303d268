#!/bin/sh
# abstain.sh -- a rank that cannot have its data after every member chose
# to offload a blocking collective (no memory: MPIR_CVAR_OFFLOAD_FAULT_NOMEM
# makes 10 % of its blocking offloaded calls act so) takes part without
# data; the switch tells every member, and every member redoes the call in
# MPICH.  coll_check (every collective, compared with MPICH) on both
# channels at 2 and 4 ranks: results must be right, and the counters must
# show abstentions and redone calls.  Before the ABSTAIN flag the others
# waited forever (shm) or until they declared the switch dead (udp).
# (Members of small bcasts, scatters and gathers never abstain: early.sh.)
# Then a rank without memory for acis's state of a communicator
# (MPIR_CVAR_OFFLOAD_FAULT_NOMEM_SETUP): every member keeps that
# communicator in MPICH, the others still offload (soak, compared with
# MPICH).  Before, that state was made at the first collective and its
# failure failed that call on one rank alone.  And a rank that abstains
# while the other is on the short path.
# (About 65 s: coll_check under injected want of memory at 2 and 4 ranks
# on both channels, then a soak.)
. "${top_srcdir:-.}/test/mpi/common.sh"
export MPIR_CVAR_OFFLOAD=on MPIR_CVAR_OFFLOAD_FAULT_NOMEM=0.1

verdict() {  # verdict WHAT RC: coll_check's $TMPD/out right, abstentions seen
    cat "$TMPD/out"
    [ "$2" = 0 ] || { tail -20 "$TMPD/err"; fail "$1"; }
    grep -q ' 0 failures' "$TMPD/out" || fail "$1: wrong results"
    grep -q ' 0 abstained' "$TMPD/out" && fail "$1: nothing abstained"
    grep -q ' 0 redone' "$TMPD/out" && fail "$1: nothing redone"
    return 0
}

check() {    # check WHAT NP ARGS...: coll_check; right, and abstentions seen
    what=$1 np=$2
    shift 2
    run_mpi $np "$TESTS_DIR/coll_check" --matrix=quick --may-redo "$@" >"$TMPD/out" 2>"$TMPD/err"
    verdict "$what" $?
}

for dev in shm udp; do
    for np in 2 4; do
        note "coll_check, $dev, $np ranks, 10 % of calls abstained"
        export MPIR_CVAR_OFFLOAD_DEVICE=$dev MPIR_CVAR_OFFLOAD_FAULT_SEED=$np
        check "coll_check, $dev, $np ranks" $np --offload=$ALL --offload-nb=$ALL \
            --counts=0,1,1000,5000
    done
done

# Only rank 0 runs out of memory: rank 1 takes the short path (shm), and
# an abstention reaches it there as on the engine's path.  Where rank 1
# returns early (a bcast or scatter it is the root of, a gather it is a
# leaf of, up to 16384 bytes), rank 0 must not abstain: it borrows.
note "coll_check, shm, 2 ranks, rank 0 abstains in 10 % of calls, rank 1 on the short path"
unset MPIR_CVAR_OFFLOAD_FAULT_NOMEM
args="--matrix=quick --may-redo --offload=$ALL --offload-nb=$ALL --counts=0,1,1000"
MPIR_CVAR_OFFLOAD_DEVICE=shm MPIR_CVAR_OFFLOAD_FAULT_SEED=7 \
    timeout -k 10 "${ACIS_TEST_TIMEOUT:-900}" "$MPIEXEC" \
    -n 1 env MPIR_CVAR_OFFLOAD_FAULT_NOMEM=0.1 "$TESTS_DIR/coll_check" $args : \
    -n 1 "$TESTS_DIR/coll_check" $args >"$TMPD/out" 2>"$TMPD/err"
verdict "one rank abstaining" $?
grep -q ', 0 on the short path' "$TMPD/out" && fail "one rank abstaining: no short path"
grep -q ', 0 returned early' "$TMPD/out" && fail "one rank abstaining: no early return"

# Seed 5 at 4 ranks keeps one of soak's three communicators and refuses
# the other two (which ones follows the order of the set-ups, and
# MPI_COMM_WORLD's is at MPI_Init): part of the calls offloaded, part not.
unset MPIR_CVAR_OFFLOAD_FAULT_NOMEM
for dev in shm udp; do
    note "soak, $dev, 4 ranks, 30 % of communicator set-ups without memory"
    MPIR_CVAR_OFFLOAD_DEVICE=$dev MPIR_CVAR_OFFLOAD_FAULT_NOMEM_SETUP=0.3 \
        MPIR_CVAR_OFFLOAD_FAULT_SEED=5 MPIR_CVAR_OFFLOAD_VERBOSE=1 \
        run_mpi 4 "$TESTS_DIR/soak" --count=300 --seed=3 >"$TMPD/out" 2>"$TMPD/err"
    rc=$?
    cat "$TMPD/out"
    [ $rc = 0 ] || { tail -20 "$TMPD/err"; fail "set-up without memory, $dev"; }
    grep -q ' 0 failures' "$TMPD/out" || fail "set-up without memory, $dev: wrong results"
    grep -q 'stays in software: communicator table entry could not be created' "$TMPD/err" ||
        fail "set-up without memory, $dev: no communicator refused"
    grep -q ' 0\.0 % offloaded' "$TMPD/out" && fail "set-up without memory, $dev: nothing offloaded"
done
exit 0
