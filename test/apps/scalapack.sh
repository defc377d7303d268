#!/bin/sh
# scalapack.sh -- a real application under acis (make check-apps): Debian's
# ScaLAPACK test programs built against MPICH (package scalapack-mpi-test),
# run unchanged at 4 ranks with libacis preloaded.  The BLACS tester (every
# precision: point-to-point, broadcasts, combines, on 2x2 and 1x4 grids) and
# the PBLAS level 1-3 testers (grids 2x2, 1x2, 2x1, 1x4 from their input
# files) must pass their own checks, and acis must have offloaded some of
# their collectives.  PBLAS runs the double real and double complex
# testers by default: single precision drives the same collectives with
# 4- and 8-byte elements, which the BLACS tester (every precision) and
# coll_check (every datatype) already cover; ACIS_SCALAPACK_PRECS="s d c z"
# runs all four.  ACIS_SCALAPACK_TESTS names another copy of the
# mpich-tests folder.  (About 2 minutes: seven testers of four ranks on
# two cores, each as long as ScaLAPACK makes it.)
. "${top_srcdir:-.}/test/mpi/common.sh"

DIR=${ACIS_SCALAPACK_TESTS:-/usr/lib/x86_64-linux-gnu/scalapack/mpich-tests}
if [ ! -x "$DIR/BLACS/xCbtest" ]; then
    echo "SKIP: no $DIR/BLACS/xCbtest (Debian package scalapack-mpi-test)"
    exit 77
fi
[ -f "$LIBACIS" ] || fail "no $LIBACIS"
export MPIR_CVAR_OFFLOAD=on
NP=4

# PBLAS: the summary table's FAILED column must be 0 everywhere, the run
# must reach "End of Tests.", and the statistics must show offload.
total=0
for prec in ${ACIS_SCALAPACK_PRECS:-d z}; do
    for lvl in 1 2 3; do
        prog=${prec}pb${lvl}tst
        run="$TMPD/$prog"
        mkdir -p "$run"
        cp "$DIR"/PBLAS/*.dat "$run"/
        (cd "$run" && LD_PRELOAD="$PRELOAD" MPIR_CVAR_OFFLOAD_STATS=1 \
            ACIS_TEST_TIMEOUT=${ACIS_TEST_TIMEOUT:-600} run_mpi $NP "$DIR/PBLAS/$prog" \
            >out 2>&1) || { tail -40 "$run/out"; fail "$prog exited with an error"; }
        grep -q 'End of Tests' "$run/out" || { tail -40 "$run/out"; fail "$prog did not finish"; }
        bad=$(awk '$1 == "|" && NF == 6 && $5 != 0' "$run/out")
        [ -z "$bad" ] || { echo "$bad"; fail "$prog: failed checks"; }
        grep -q 'FAILED  \*\*\*\*\*' "$run/out" && fail "$prog: a check FAILED"
        n=$(awk '$1 == "|" && NF == 6 { t += $3 } END { print t + 0 }' "$run/out")
        [ "$n" -gt 0 ] || fail "$prog ran no tests"
        off=$(awk '/^acis: MPI_/ { s += $4 } END { print s + 0 }' "$run/out")
        [ "$off" -gt 0 ] || { grep '^acis:' "$run/out"; fail "$prog: nothing offloaded"; }
        total=$((total + off))
        echo "ok: $prog, $n tests passed, $off collectives offloaded"
    done
done

# BLACS: every "... TESTS:" line must say 0 FAILED; its last test is
# BLACS_ABORT, which ends the job with an error on purpose, so the exit
# status is not the verdict and the statistics table is never printed:
# the verbose decision lines show what was offloaded instead.
run="$TMPD/blacs"
mkdir -p "$run"
cp "$DIR"/BLACS/*.dat "$run"/
(cd "$run" && LD_PRELOAD="$PRELOAD" MPIR_CVAR_OFFLOAD_VERBOSE=1 \
    ACIS_TEST_TIMEOUT=${ACIS_TEST_TIMEOUT:-600} run_mpi $NP "$DIR/BLACS/xCbtest" \
    >out 2>&1) || true
grep -q 'The final auxiliary test is for BLACS_ABORT' "$run/out" ||
    { tail -40 "$run/out"; fail "the BLACS tester did not reach its last test"; }
lines=$(grep -c ' TESTS: .* FAILED\.' "$run/out")
[ "$lines" -ge 20 ] || { tail -40 "$run/out"; fail "only $lines BLACS test summaries"; }
grep ' TESTS: .* FAILED\.' "$run/out" | grep -v ' 0 FAILED\.' &&
    fail "BLACS tests failed"
grep -E '^ *(FAILED|ERROR)' "$run/out" && fail "a BLACS auxiliary test failed"
off=$(grep -c 'offloaded to the switch' "$run/out")
[ "$off" -gt 0 ] || fail "BLACS: nothing offloaded"
echo "ok: BLACS tester, $lines test groups with 0 failed, $off collective kinds offloaded"
echo "ok: PBLAS offloaded $total collectives in all"
