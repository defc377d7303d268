# common.sh -- shared helpers of the MPI test scripts (sourced, not run).
# make check exports MPIEXEC, top_builddir and top_srcdir.
: "${MPIEXEC:=mpiexec.mpich}"
: "${top_builddir:=$(pwd)}"
: "${top_srcdir:=$top_builddir}"
LIBACIS="$top_builddir/.libs/libacis.so"
TESTS_DIR="$top_builddir/test/mpi"
TMPD=$(mktemp -d "${TMPDIR:-/tmp}/acis-test.XXXXXX")
trap 'rm -rf "$TMPD"' EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
note() { echo "== $*"; }

# run_mpi NP PROGRAM [ARGS...]: run under MPICH's launcher with a time limit
# so a hang fails the test instead of stalling make check.
run_mpi() {
    np=$1; shift
    timeout -k 10 "${ACIS_TEST_TIMEOUT:-900}" "$MPIEXEC" -n "$np" "$@"
}

# Only the acis variables a test sets itself may be in the environment.
for v in $(env | sed -n 's/^\(\(MPIR_CVAR\|MPIR_PARAM\|MPICH\)_OFFLOAD[A-Z_]*\)=.*/\1/p'); do
    unset "$v"
done
