#!/bin/sh
# init_agree.sh -- a step of MPI_Init that fails on one rank only
# (MPIR_CVAR_OFFLOAD_FAULT_INIT given to that rank alone) puts every rank
# in the same mode (init_agree): the communicator table on rank 0 and on
# the last rank (every rank runs in MPICH), MPICH's generalized request
# class (nonblocking calls in MPICH everywhere) at 2 ranks; the node
# hierarchy's keyval at 4 ranks on two fake nodes (every rank runs flat),
# beside the same run without the fault (hierarchical).  Before the fix
# the failing rank alone changed mode and the job hung or failed.
. "${top_srcdir:-.}/test/mpi/common.sh"
export MPIR_CVAR_OFFLOAD=on
T=${ACIS_TEST_TIMEOUT:-60}
prog="$TESTS_DIR/init_agree"
F=MPIR_CVAR_OFFLOAD_FAULT_INIT

note "no fault, 2 ranks"
ACIS_TEST_TIMEOUT=$T run_mpi 2 "$prog" --expect=all || fail "init_agree, no fault"
note "communicator table fails on rank 0 of 2"
ACIS_TEST_TIMEOUT=$T run_mpi 1 env $F=tables "$prog" --expect=none : -n 1 "$prog" --expect=none ||
    fail "init_agree, tables on rank 0"
note "communicator table fails on rank 1 of 2"
ACIS_TEST_TIMEOUT=$T run_mpi 1 "$prog" --expect=none : -n 1 env $F=tables "$prog" --expect=none ||
    fail "init_agree, tables on rank 1"
note "generalized requests fail on rank 1 of 2"
ACIS_TEST_TIMEOUT=$T run_mpi 1 "$prog" --expect=blocking : -n 1 env $F=nb "$prog" --expect=blocking ||
    fail "init_agree, nb on rank 1"

export MPIR_CVAR_ODD_EVEN_CLIQUES=1 MPIR_CVAR_OFFLOAD_DEVICE=udp MPIR_CVAR_OFFLOAD_HIERARCHY=node
note "no fault, 4 ranks on two fake nodes: hierarchical"
ACIS_TEST_TIMEOUT=$T run_mpi 4 "$prog" --expect=all --hier=1 || fail "init_agree, hierarchy"
note "the hierarchy's keyval fails on rank 1 of 4"
ACIS_TEST_TIMEOUT=$T run_mpi 1 "$prog" --expect=flat : -n 1 env $F=hier "$prog" --expect=flat \
    : -n 2 "$prog" --expect=flat || fail "init_agree, hier on rank 1"
