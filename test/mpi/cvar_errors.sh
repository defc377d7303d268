#!/bin/sh
# cvar_errors.sh -- a malformed or unknown MPIR_CVAR_OFFLOAD_* value stops
# MPI_Init with exactly one line naming the variable, the value and what is
# allowed; values of all-ranks scope that differ between ranks stop it too.
. "${top_srcdir:-.}/test/mpi/common.sh"

prog="$TESTS_DIR/coll_check"
OFF="--offload=$ALL --offload-nb=$ALL"

expect_stop() {     # expect_stop "pattern" env-assignment...
    pattern=$1; shift
    env "$@" timeout 120 "$MPIEXEC" -n 2 "$prog" --matrix=quick --counts=0 \
        >"$TMPD/out" 2>"$TMPD/err" && fail "$* did not stop the job"
    n=$(grep -c '^acis: ' "$TMPD/err")
    [ "$n" = 1 ] || { cat "$TMPD/err"; fail "$*: expected one acis line, got $n"; }
    grep -F -q "$pattern" "$TMPD/err" || { cat "$TMPD/err"; fail "$*: no '$pattern'"; }
    echo "ok: $* -> $(grep '^acis: ' "$TMPD/err")"
}

expect_stop 'MPIR_CVAR_OFFLOAD_ALLREDUCE="maybe" is not valid; allowed: auto|on|off' \
    MPIR_CVAR_OFFLOAD_ALLREDUCE=maybe
expect_stop 'MPIR_CVAR_OFFLOAD_VERBOSE="9" is not valid; allowed: an integer in 0..3' \
    MPIR_CVAR_OFFLOAD_VERBOSE=9
expect_stop 'MPIR_CVAR_OFFLOAD_MAX_MSG_SIZE="lots" is not valid' \
    MPIR_CVAR_OFFLOAD_MAX_MSG_SIZE=lots
expect_stop 'MPIR_CVAR_OFFLOAD_SWITCH="nowhere" is not valid; allowed: auto|HOST:PORT|PATH' \
    MPIR_CVAR_OFFLOAD_SWITCH=nowhere
expect_stop 'MPICH_OFFLOAD_DEVICE="ib" is not valid; allowed: udp|shm|verbs|none|auto' \
    MPICH_OFFLOAD_DEVICE=ib
expect_stop 'MPIR_CVAR_OFFLOAD_BCST is not an acis variable' MPIR_CVAR_OFFLOAD_BCST=on

# Ranks with different values of an all-ranks variable (MPMD launch).
timeout 120 "$MPIEXEC" -n 1 -env MPIR_CVAR_OFFLOAD_BCAST off "$prog" --counts=0 : \
    -n 1 "$prog" --counts=0 >"$TMPD/out" 2>"$TMPD/err" && fail "differing CVARs not stopped"
grep -q '^acis: .*differ between ranks' "$TMPD/err" || { cat "$TMPD/err"; fail "no differ line"; }
[ "$(grep -c '^acis: ' "$TMPD/err")" = 1 ] || fail "differing CVARs: not one line"
echo "ok: differing MPIR_CVAR_OFFLOAD_BCAST stopped with one line"

# A local-scope variable may differ.
timeout 120 "$MPIEXEC" -n 1 -env MPIR_CVAR_OFFLOAD_SPIN_US 7 "$prog" $OFF --matrix=quick \
    --counts=0 : -n 1 "$prog" $OFF --matrix=quick --counts=0 >"$TMPD/out" 2>"$TMPD/err" ||
    { cat "$TMPD/err"; fail "a differing local variable stopped the job"; }
echo "ok: differing MPIR_CVAR_OFFLOAD_SPIN_US accepted"
