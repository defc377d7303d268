#!/bin/sh
# verbose.sh -- MPIR_CVAR_OFFLOAD_VERBOSE=1 reports each distinct
# (collective, decision, reason) once per communicator, from its rank 0
# only; VERBOSE=2 from every rank; VERBOSE=0 says nothing.
. "${top_srcdir:-.}/test/mpi/common.sh"

prog="$TESTS_DIR/osu_like"
LD_PRELOAD="$PRELOAD" MPIR_CVAR_OFFLOAD_VERBOSE=1 MPIR_CVAR_OFFLOAD_DEVICE=none \
    run_mpi 2 "$prog" -t allreduce -m 1024 -i 30 >"$TMPD/out" 2>"$TMPD/err" ||
    fail "verbose run failed"
n=$(grep -c '^acis\[0\]: MPI_Allreduce on MPI_COMM_WORLD' "$TMPD/err")
[ "$n" = 1 ] || { cat "$TMPD/err"; fail "expected one MPI_Allreduce report, got $n"; }
grep -q '^acis\[1\]: MPI_Allreduce' "$TMPD/err" && fail "rank 1 reported at VERBOSE=1"
grep '^acis\[0\]: MPI_Allreduce' "$TMPD/err"

LD_PRELOAD="$PRELOAD" MPIR_CVAR_OFFLOAD_VERBOSE=2 MPIR_CVAR_OFFLOAD_DEVICE=none \
    run_mpi 2 "$prog" -t allreduce -m 64 -i 5 >"$TMPD/out" 2>"$TMPD/err" || fail "VERBOSE=2 run"
grep -q '^acis\[1\]: MPI_Allreduce on MPI_COMM_WORLD' "$TMPD/err" ||
    { cat "$TMPD/err"; fail "rank 1 silent at VERBOSE=2"; }

LD_PRELOAD="$PRELOAD" MPIR_CVAR_OFFLOAD_DEVICE=none \
    run_mpi 2 "$prog" -t allreduce -m 64 -i 5 >"$TMPD/out" 2>"$TMPD/err" || fail "quiet run"
grep -q '^acis' "$TMPD/err" && { cat "$TMPD/err"; fail "output at VERBOSE=0"; }

# The embedded UDP switch's thread spins between packets only with a core
# left over for it under WAIT=auto; spin and block say so themselves.
for wait in auto spin block; do
    LD_PRELOAD="$PRELOAD" MPIR_CVAR_OFFLOAD_VERBOSE=1 MPIR_CVAR_OFFLOAD_DEVICE=udp \
        MPIR_CVAR_OFFLOAD_WAIT=$wait run_mpi 2 "$prog" -t allreduce -m 64 -i 5 \
        >"$TMPD/out" 2>"$TMPD/err" || fail "udp run, WAIT=$wait"
    line=$(grep "embedded switch's thread" "$TMPD/err") ||
        { cat "$TMPD/err"; fail "WAIT=$wait: no line on the switch thread"; }
    set -- $(echo "$line" | sed 's/.*thread \([a-z]*\) between packets (\([0-9]*\) ranks on this node, \([0-9]*\) cores).*/\1 \2 \3/')
    case $wait in
    auto)  want=$([ "$2" -lt "$3" ] && echo spins || echo sleeps) ;;
    spin)  want=spins ;;
    block) want=sleeps ;;
    esac
    [ "$1" = "$want" ] || fail "WAIT=$wait, $2 ranks, $3 cores: the switch thread $1, not $want"
    echo "ok: WAIT=$wait: $line"
done
echo "ok: verbose reporting"
