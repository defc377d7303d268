# common.sh -- shared helpers of the MPI test scripts (sourced, not run).
# make check exports MPIEXEC, top_builddir and top_srcdir.
: "${MPIEXEC:=mpiexec.mpich}"
: "${top_builddir:=$(pwd)}"
: "${top_srcdir:=$top_builddir}"
LIBACIS="$top_builddir/.libs/libacis.so"
# What LD_PRELOAD gets: libacis, after the ASan runtime in sanitized builds.
PRELOAD="${ACIS_ASAN_RUNTIME:+$ACIS_ASAN_RUNTIME }$LIBACIS"
TESTS_DIR="$top_builddir/test/mpi"
TMPD=$(mktemp -d "${TMPDIR:-/tmp}/acis-test.XXXXXX")
# At exit: stop background watchers ($TMPD/watch*.pid) first, so none
# starts a switch after this, then every acis-switchd start_switchd started
# that still runs (by pid file, checked by name: a dead switch's pid may
# have been reused), and remove $TMPD.
cleanup() {
    for f in "$TMPD"/watch*.pid; do
        [ -f "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null
    done
    for f in "$TMPD"/sw*.pid; do
        [ -f "$f" ] || continue
        p=$(cat "$f")
        [ "$(cat "/proc/$p/comm" 2>/dev/null)" = acis-switchd ] && kill -9 "$p"
    done
    rm -rf "$TMPD"
}
trap cleanup EXIT

# Every collective acis offloads, as coll_check's --offload lists them.
ALL=barrier,bcast,reduce,allreduce,gather,gatherv,scatter,scatterv,allgather,allgatherv
ALL=$ALL,reduce_scatter,reduce_scatter_block,scan,exscan

fail() { echo "FAIL: $*" >&2; exit 1; }
# note TEXT: a step's heading; the step before it gets its time.
note() {
    _note_now=$(date +%s)
    [ -n "${_note_at:-}" ] && echo "   ($(( _note_now - _note_at )) s)"
    _note_at=$_note_now
    echo "== $*"
}

# start_switchd TAG [ARGS...]: start acis-switchd ARGS in the background (its
# pid in $TMPD/swTAG.pid, its output in $TMPD/swTAG.out) and print the
# address it listens on once it does; fails after 5 s.
start_switchd() {
    sw_tag=$1; shift
    "$top_builddir/src/switch/acis-switchd" "$@" >"$TMPD/sw$sw_tag.out" 2>&1 &
    echo $! >"$TMPD/sw$sw_tag.pid"
    for sw_i in $(seq 50); do
        sw_a=$(sed -n 's/^acis-switchd: listening on //p' "$TMPD/sw$sw_tag.out")
        [ -n "$sw_a" ] && { echo "$sw_a"; return 0; }
        sleep 0.1
    done
    return 1
}

# run_mpi NP PROGRAM [ARGS...]: run under MPICH's launcher with a time limit
# so a hang fails the test instead of stalling make check.
run_mpi() {
    _run_np=$1; shift
    timeout -k 10 "${ACIS_TEST_TIMEOUT:-900}" "$MPIEXEC" -n "$_run_np" "$@"
}

# Only the acis variables a test sets itself may be in the environment.
for v in $(env | sed -n 's/^\(\(MPIR_CVAR\|MPIR_PARAM\|MPICH\)_OFFLOAD[A-Z_]*\)=.*/\1/p'); do
    unset "$v"
done
# Under a sanitizer everything runs several times slower: MPI_Init may
# take longer than the default 2 s to reach the job's switch (a test that
# sets its own value overrides this).
# MPICH's MPI_Init leaks what hwloc's PCI plugin allocates, and hwloc
# unloads the plugin before exit, so ASan's fast unwinder (Makefile.am)
# cannot name the leak for test/lsan.supp; the slow one can, but it made
# every malloc inside MPICH cost so much that a 2-rank run of coll_check
# without a device took 117 s against 6 s.  So the sanitized MPI tests
# run with hwloc's PCI discovery off (no test here needs MPICH to see
# PCI devices) and leak checking sees no leak of MPICH's at all.
if [ -n "${ACIS_TEST_SANITIZED:-}" ]; then
    MPIR_CVAR_OFFLOAD_CONNECT_MS=30000
    HWLOC_COMPONENTS="${HWLOC_COMPONENTS:+$HWLOC_COMPONENTS,}-pci"
    export MPIR_CVAR_OFFLOAD_CONNECT_MS HWLOC_COMPONENTS
fi
