#!/bin/sh
# software.sh -- every intercepted collective with offload unavailable
# (MPIR_CVAR_OFFLOAD_DEVICE=none) and switched off (MPIR_CVAR_OFFLOAD=off),
# at 2 and 4 ranks: results must equal MPICH's and every call must be
# counted as software with the right reason.
. "${top_srcdir:-.}/test/mpi/common.sh"

note "2 ranks, no device, full matrix"
MPIR_CVAR_OFFLOAD_DEVICE=none run_mpi 2 "$TESTS_DIR/coll_check" || fail "2 ranks, no device"
note "2 ranks, offload off"
MPIR_CVAR_OFFLOAD=off run_mpi 2 "$TESTS_DIR/coll_check" --matrix=quick ||
    fail "2 ranks, offload off"
note "4 ranks, no device, quick matrix"
MPIR_CVAR_OFFLOAD_DEVICE=none run_mpi 4 "$TESTS_DIR/coll_check" --matrix=quick --counts=0,5 ||
    fail "4 ranks, no device"
