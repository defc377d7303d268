#!/bin/sh
# nbshort.sh -- nonblocking collectives on the short path
# (test/mpi/nbshort.c: roots running ahead, members whose answer is to
# come, a long allreduce behind such a call while the member sits in
# MPICH, a member waiting for such a call while a peer's large send to it
# needs its MPICH to move, a communicator freed before the wait, requests
# freed).  On shm
# at 2 and 4 ranks every call of the counted cases must run on the short
# path; a member that abstains (no memory) makes every member fail the
# call, those on the short path too, and the communicator goes on; with
# MPIR_CVAR_OFFLOAD_SHORT_PATH=0, and on udp, the same cases run through
# the engine and must give the same results; a refused MPI_Request_free
# or MPI_Cancel is explained once per rank (later ones only when verbose).
. "${top_srcdir:-.}/test/mpi/common.sh"
export MPIR_CVAR_OFFLOAD=on ACIS_TEST_TIMEOUT=${ACIS_TEST_TIMEOUT:-120}

for np in 2 4; do
    note "shm, $np ranks: on the short path"
    MPIR_CVAR_OFFLOAD_DEVICE=shm run_mpi $np "$TESTS_DIR/nbshort" --expect-short ||
        fail "shm, $np ranks"
done
note "shm, 2 ranks: rank 1 abstains from every nonblocking call; all fail it with MPI_ERR_NO_MEM"
MPIR_CVAR_OFFLOAD_DEVICE=shm timeout -k 10 "$ACIS_TEST_TIMEOUT" "$MPIEXEC" \
    -n 1 "$TESTS_DIR/nbshort" --abstain : \
    -n 1 env MPIR_CVAR_OFFLOAD_FAULT_NOMEM_NB=1 "$TESTS_DIR/nbshort" --abstain ||
    fail "shm, a member abstaining"
note "shm, 2 ranks, MPIR_CVAR_OFFLOAD_SHORT_PATH=0: through the engine"
MPIR_CVAR_OFFLOAD_DEVICE=shm MPIR_CVAR_OFFLOAD_SHORT_PATH=0 run_mpi 2 "$TESTS_DIR/nbshort" ||
    fail "shm, short path off"
note "udp, 2 ranks: through the engine; each rank says once why a free or cancel is refused"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
MPIR_CVAR_OFFLOAD_DEVICE=udp run_mpi 2 "$TESTS_DIR/nbshort" 2>"$log" || { cat "$log" >&2; fail "udp"; }
said=$(grep -c "which MPI does not let be freed or cancelled" "$log" || true)
[ "$said" = 2 ] || { cat "$log" >&2; fail "udp: $said refusal lines, want one per rank"; }
exit 0
