#!/bin/sh
# faults.sh -- every collective under injected faults: 5 % each of drop,
# duplicate, reorder, delay and corrupt on every host and on the embedded
# switch (MPIR_CVAR_OFFLOAD_FAULT_*), at 2 ranks; then a standalone
# acis-switchd injecting its own (--fault-*) at 4 ranks.  coll_check
# compares every result with MPICH and checks each call was offloaded;
# the faults must show as retransmissions.
. "${top_srcdir:-.}/test/mpi/common.sh"


check_out() {    # check_out WHAT
    cat "$TMPD/out"
    [ $rc = 0 ] || { tail -20 "$TMPD/err"; fail "$1"; }
    grep -q ' 0 failures' "$TMPD/out" || fail "$1: wrong results"
    grep -q ' 0 retransmissions' "$TMPD/out" && fail "$1: the faults caused no retransmission"
    return 0
}

note "2 ranks, 5 % of every fault on hosts and the embedded switch"
MPIR_CVAR_OFFLOAD=on MPIR_CVAR_OFFLOAD_DEVICE=udp MPIR_CVAR_OFFLOAD_FAULT_DROP=0.05 MPIR_CVAR_OFFLOAD_FAULT_DUP=5% \
    MPIR_CVAR_OFFLOAD_FAULT_REORDER=0.05 MPIR_CVAR_OFFLOAD_FAULT_DELAY=0.05 \
    MPIR_CVAR_OFFLOAD_FAULT_CORRUPT=0.05 MPIR_CVAR_OFFLOAD_FAULT_SEED=7 \
    run_mpi 2 "$TESTS_DIR/coll_check" --offload=$ALL --offload-nb=$ALL --matrix=quick \
    >"$TMPD/out" 2>"$TMPD/err"
rc=$?
check_out "2 ranks under faults"

note "4 ranks, acis-switchd --fault-drop 3% --fault-dup 3% --fault-reorder 3%"
addr=$(start_switchd 1 --fault-drop 3% --fault-dup 3% --fault-reorder 3% \
    --fault-seed 5) || fail "acis-switchd did not start"
MPIR_CVAR_OFFLOAD=on MPIR_CVAR_OFFLOAD_SWITCH=$addr \
    run_mpi 4 "$TESTS_DIR/coll_check" --offload=$ALL --offload-nb=$ALL --matrix=quick \
    --counts=0,1,1000,5000 >"$TMPD/out" 2>"$TMPD/err"
rc=$?
check_out "4 ranks, faults in acis-switchd"
