#!/bin/sh
# persist.sh -- persistent collectives (MPI_*_init, then MPI_Start) in the
# switch, through test/mpi/persist.c: every offloaded collective's request
# started 40 times with new data, checked against MPICH's blocking call,
# completed through every wait and test call beside MPICH's own
# point-to-point requests; MPI_Startall, and one it must refuse, which
# starts none of its requests; datatype and communicator freed
# after init; a request freed while it runs; gatherv in MPICH.  The
# counters must show every init but gatherv's offloaded and every start in
# the switch.  shm and udp at 2 ranks, shm at 4 ranks (fewer rounds),
# with the program-wide order CVAR; then with the order asserted on
# MPI_COMM_WORLD alone, and a broadcast and a barrier started in opposite
# orders on another communicator (MPI-4.0 allows it: MPICH runs them).
# Not run on plain MPICH: 4.0.2's own persistent collectives fail it (its
# MPI_Testall returns MPI_ERR_IN_STATUS for a finished persistent
# collective with no error; gather, scatter and allgather restarts send
# stale data: docs/performance.md, "OSU's persistent benchmarks").
. "${top_srcdir:-.}/test/mpi/common.sh"
export MPIR_CVAR_OFFLOAD=on

for dev in shm udp; do
    note "$dev, 2 ranks, MPIR_CVAR_OFFLOAD_PERSISTENT_ORDER=strict"
    MPIR_CVAR_OFFLOAD_DEVICE=$dev MPIR_CVAR_OFFLOAD_PERSISTENT_ORDER=strict \
        run_mpi 2 "$TESTS_DIR/persist" --expect-offload || fail "$dev, 2 ranks"
done
note "shm, 4 ranks, strict"
MPIR_CVAR_OFFLOAD_DEVICE=shm MPIR_CVAR_OFFLOAD_PERSISTENT_ORDER=strict \
    run_mpi 4 "$TESTS_DIR/persist" --rounds=12 --expect-offload || fail "shm, 4 ranks"
note "udp, 2 ranks: order asserted on MPI_COMM_WORLD; out of order on another"
MPIR_CVAR_OFFLOAD_DEVICE=udp run_mpi 2 "$TESTS_DIR/persist" --assert-comm --rounds=20 \
    --expect-offload || fail "udp, asserted order"
note "shm, 2 ranks: starts without memory fail on every member, once (10 %)"
MPIR_CVAR_OFFLOAD_DEVICE=shm MPIR_CVAR_OFFLOAD_PERSISTENT_ORDER=strict \
    MPIR_CVAR_OFFLOAD_FAULT_NOMEM_NB=0.1 run_mpi 2 "$TESTS_DIR/persist" --nomem ||
    fail "starts without memory"
note "shm, 3 ranks: requests freed while running give their rows back"
MPIR_CVAR_OFFLOAD_DEVICE=shm MPIR_CVAR_OFFLOAD_PERSISTENT_ORDER=strict \
    run_mpi 3 "$TESTS_DIR/persist" --orphans || fail "freed while running"
