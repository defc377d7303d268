#!/bin/sh
# verbs.sh -- the verbs channel under mpiexec when it cannot run (this
# project's test machines have no RDMA device; a build without libibverbs
# has no channel at all): MPIR_CVAR_OFFLOAD_DEVICE=verbs says in one line,
# without VERBOSE, what is missing, and every collective runs in MPICH
# with MPICH's results; auto never picks verbs without a verbs switch
# address and says nothing when it falls back.  The end-to-end run with
# a device is test/mpi/verbs_e2e.sh.
. "${top_srcdir:-.}/test/mpi/common.sh"

prog="$TESTS_DIR/coll_check"
devs=$("$top_builddir/tools/acis-info" --json --no-switch | sed -n 's/.*"rdma_devices": "\(.*\)".*/\1/p')
note "RDMA devices: $devs"
case $devs in
none|"not built"*) ;;
*) echo "SKIP: this machine has RDMA devices ($devs); verbs_e2e.sh covers it"; exit 77 ;;
esac

# Asked for by name, in a build without the channel: MPI_Init stops with
# one line naming the variable and what this build allows.
case $devs in
none) want="verbs: no RDMA device found" ;;
*) want="built without libibverbs"
   MPIR_CVAR_OFFLOAD_DEVICE=verbs run_mpi 2 "$prog" --matrix=quick --counts=0 \
       >"$TMPD/out" 2>"$TMPD/err" && fail "DEVICE=verbs without the channel did not stop"
   [ "$(grep -c '^acis: ' "$TMPD/err")" = 1 ] || { cat "$TMPD/err"; fail "not one line"; }
   grep -q '^acis: MPIR_CVAR_OFFLOAD_DEVICE="verbs" is not valid; allowed in this build: udp|shm|none|auto' \
       "$TMPD/err" || { cat "$TMPD/err"; fail "DEVICE=verbs: wrong message"; }
   echo "ok: DEVICE=verbs -> $(grep '^acis: ' "$TMPD/err")" ;;
esac

# Asked for by name, no device: one line saying what is missing;
# coll_check checks every result against PMPI and that no call was
# offloaded.
if [ "$devs" = none ]; then
    MPIR_CVAR_OFFLOAD_DEVICE=verbs run_mpi 2 "$prog" --matrix=quick --counts=0,3 \
        >"$TMPD/out" 2>"$TMPD/err" || { cat "$TMPD/err"; fail "DEVICE=verbs job failed"; }
    n=$(grep -c 'collectives run in MPICH' "$TMPD/err")
    [ "$n" = 1 ] || { cat "$TMPD/err"; fail "DEVICE=verbs: expected one line, got $n"; }
    grep -q "collectives run in MPICH: .*$want" "$TMPD/err" ||
        { cat "$TMPD/err"; fail "no '$want'"; }
    echo "ok: DEVICE=verbs -> $(grep 'collectives run in MPICH' "$TMPD/err")"
fi

# A verbs endpoint, device auto: verbs is tried, and it falls back quietly.
MPIR_CVAR_OFFLOAD_SWITCH=7/0x1a2b run_mpi 2 "$prog" --matrix=quick --counts=3 \
    >"$TMPD/out" 2>"$TMPD/err" || { cat "$TMPD/err"; fail "auto with a verbs endpoint"; }
grep -q '^acis' "$TMPD/err" && { cat "$TMPD/err"; fail "auto said something at VERBOSE=0"; }
MPIR_CVAR_OFFLOAD_SWITCH=7/0x1a2b MPIR_CVAR_OFFLOAD_VERBOSE=1 run_mpi 2 "$prog" \
    --matrix=quick --counts=3 >"$TMPD/out" 2>"$TMPD/err" || fail "auto, verbose"
grep -q "collectives run in MPICH: .*$want" "$TMPD/err" ||
    { cat "$TMPD/err"; fail "auto with a verbs endpoint did not try verbs"; }
echo "ok: auto with a verbs endpoint tries verbs, falls back quietly"

# Device auto, switch auto: the job's own switch, never verbs.
MPIR_CVAR_OFFLOAD_VERBOSE=1 run_mpi 2 "$prog" --matrix=quick --counts=3 --offload=$ALL \
    --offload-nb=$ALL >"$TMPD/out" 2>"$TMPD/err" || { cat "$TMPD/err"; fail "auto, auto"; }
grep -q 'verbs' "$TMPD/err" && { cat "$TMPD/err"; fail "auto mentioned verbs"; }
echo "ok: auto, auto offloads without verbs"
