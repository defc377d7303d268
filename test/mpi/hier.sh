#!/bin/sh
# hier.sh -- the node hierarchy at 4 ranks on two fake nodes (MPICH's
# MPIR_CVAR_ODD_EVEN_CLIQUES): hier_check compares allreduce, bcast and
# barrier with MPICH and checks from the counters that only node leaders
# reached the switch; on the embedded UDP switch (auto picks the
# hierarchy) and on acis-switchd; then coll_check, every collective, with
# the hierarchy on (the others run flat beside it).
. "${top_srcdir:-.}/test/mpi/common.sh"
export MPIR_CVAR_OFFLOAD=on MPIR_CVAR_ODD_EVEN_CLIQUES=1

note "hierarchy chosen by auto, embedded switch"
run_mpi 4 "$TESTS_DIR/hier_check" || fail "hier_check, embedded switch"
addr=$(start_switchd h --listen 127.0.0.1:0) || fail "acis-switchd did not start"
note "hierarchy on acis-switchd at $addr"
MPIR_CVAR_OFFLOAD_SWITCH=$addr MPIR_CVAR_OFFLOAD_HIERARCHY=node \
    run_mpi 4 "$TESTS_DIR/hier_check" || fail "hier_check, acis-switchd"
note "every collective with the hierarchy on"
MPIR_CVAR_OFFLOAD_SWITCH=$addr MPIR_CVAR_OFFLOAD_HIERARCHY=node \
    run_mpi 4 "$TESTS_DIR/coll_check" --offload=$ALL --offload-nb=$ALL --matrix=quick \
        --counts=5,3000 ||
    fail "coll_check with the hierarchy"
