#!/bin/sh
# switch_kill.sh -- acis-switchd killed in the middle of a run of collectives
# at 4 ranks (switch_kill.c checks every result against MPICH and the
# counters), then restarted on the same address: a new communicator uses it
# again.  Then a switch that goes silent (SIGSTOP: found by the timeout, not
# by a refused socket) at 2 ranks with MPIR_CVAR_OFFLOAD_REJOIN=never: new
# communicators stay in MPICH.  Then communicators that break, and calls
# finished by the members or failed over after a kill against MPICH's own
# Ialltoall (redo_order.c, 2 and 4 ranks, and 4 on two fake nodes), and a
# rank sitting in MPICH while its peer waits for a collective after a kill
# (failover_away.c, 2 and 4 ranks, and 2 over TCP).  A hang fails the test
# through run_mpi's time limit.
. "${top_srcdir:-.}/test/mpi/common.sh"

# restart_when_dead PID LISTEN TAG: in the background, start a new switch on
# the same address once the old one is gone, then create $TMPD/back.TAG.
restart_when_dead() {
    ( while kill -0 "$1" 2>/dev/null; do sleep 0.1; done
      start_switchd "$3" --listen "$2" >/dev/null && touch "$TMPD/back.$3"
      rm -f "$TMPD/watch$3.pid" ) &
    echo $! >"$TMPD/watch$3.pid"
}

# shown TAG WHAT LINE: show run TAG's output and the notable lines of its
# log; it must have exited 0 ($rc) and logged LINE.
shown() {
    cat "$TMPD/out.$1"
    grep -E 'FAIL|killed|failed|again|abort|MPI_ERR_INTERN' "$TMPD/err.$1" | sort | uniq -c |
        head -20
    [ $rc = 0 ] || { tail -20 "$TMPD/err.$1"; fail "$2: exit $rc"; }
    grep -q "$3" "$TMPD/err.$1" || fail "$2: no line saying '$3'"
}

# kill_run NP TAG SIGNAL REJOIN EXPECT: one job; the switch of TAG dies
# (KILL: then a new one starts on its address) or freezes (STOP) mid-run.
kill_run() {
    np=$1 tag=$2 sig=$3 rejoin=$4 expect=$5
    pid=$(cat "$TMPD/sw$tag.pid")
    if [ "$sig" = KILL ]; then
        restart_when_dead "$pid" "$addr" "$((tag + 1))"
    else
        touch "$TMPD/back.$((tag + 1))"
    fi
    start=$(date +%s)
    ACIS_TEST_SWITCH_PID=$pid ACIS_TEST_SIGNAL=$sig MPIR_CVAR_OFFLOAD=on \
        MPIR_CVAR_OFFLOAD_SWITCH=$addr \
        MPIR_CVAR_OFFLOAD_TIMEOUT_MS=1000 MPIR_CVAR_OFFLOAD_CONNECT_MS=500 \
        MPIR_CVAR_OFFLOAD_REJOIN=$rejoin MPIR_CVAR_OFFLOAD_VERBOSE=1 \
        run_mpi "$np" "$TESTS_DIR/switch_kill" --kill-at=8 --iters=24 \
        --rejoin-file="$TMPD/back.$((tag + 1))" --rejoin="$expect" \
        >"$TMPD/out.$tag" 2>"$TMPD/err.$tag"
    rc=$?
    shown "$tag" "$np ranks, rejoin=$rejoin" 'its switch failed'
    echo "ok: $np ranks, SIG$sig, REJOIN=$rejoin, $(($(date +%s) - start)) s"
}

addr=$(start_switchd 1 --listen 127.0.0.1:0) || fail "acis-switchd did not start"
note "switch at $addr"
kill_run 4 1 KILL new yes
note "the restarted switch goes silent; REJOIN=never"
kill_run 2 2 STOP never no
note "a switch killed where the members cannot finish (each says it lost every packet)"
addr=$(start_switchd 5 --listen 127.0.0.1:0) || fail "acis-switchd did not start"
ACIS_TEST_SWITCH_PID=$(cat "$TMPD/sw5.pid") MPIR_CVAR_OFFLOAD=on MPIR_CVAR_OFFLOAD_SWITCH=$addr \
    MPIR_CVAR_OFFLOAD_TIMEOUT_MS=1000 MPIR_CVAR_OFFLOAD_CONNECT_MS=500 \
    MPIR_CVAR_OFFLOAD_REJOIN=never MPIR_CVAR_OFFLOAD_FAULT_FORGET=1 \
    run_mpi 4 "$TESTS_DIR/switch_kill" --kill-at=4 --iters=10 --broken=1 \
    >"$TMPD/out.5" 2>"$TMPD/err.5"
rc=$?
shown 5 "broken communicators" 'return MPI_ERR_INTERN from now on'

# Calls redone in MPICH after the kill, and calls failed over, run on the
# communicator's dup: their order against an MPI_Ialltoall MPICH runs on the
# communicator itself must not depend on when each rank learnt of the
# failure (redo_order.c); with the node hierarchy on two fake nodes, a
# blocking allreduce keeps its shape across the move.  On the user's
# communicator the 2-rank and the hierarchy runs hung.
for run in 2:0 4:0 4:1; do
    np=${run%:*} hier=${run#*:} tag=$((10 + ${run%:*} + 10 * ${run#*:}))
    note "redone calls and MPICH's own, $np ranks, hierarchy $hier"
    addr=$(start_switchd $tag --listen 127.0.0.1:0) || fail "acis-switchd did not start"
    ACIS_TEST_SWITCH_PID=$(cat "$TMPD/sw$tag.pid") MPIR_CVAR_OFFLOAD=on \
        MPIR_CVAR_OFFLOAD_SWITCH=$addr MPIR_CVAR_OFFLOAD_TIMEOUT_MS=1000 \
        MPIR_CVAR_OFFLOAD_CONNECT_MS=500 MPIR_CVAR_OFFLOAD_REJOIN=never \
        MPIR_CVAR_OFFLOAD_VERBOSE=1 MPIR_CVAR_ODD_EVEN_CLIQUES=$hier \
        MPIR_CVAR_OFFLOAD_HIERARCHY=$([ "$hier" = 1 ] && echo node || echo flat) \
        ACIS_TEST_TIMEOUT=120 run_mpi "$np" "$TESTS_DIR/redo_order" --hier="$hier" \
        >"$TMPD/out.$tag" 2>"$TMPD/err.$tag"
    rc=$?
    shown $tag "$np ranks, hierarchy $hier, redo order" 'its switch failed'
    grep -q "redo_order: $np ranks: ok" "$TMPD/out.$tag" ||
        fail "$np ranks, hierarchy $hier, redo order: not ok"
done

# A rank sitting in MPICH (MPI_Recv) while its peer waits for a collective
# both started after the failure, before they agreed on MPICH: the members
# finish it, nothing is redone (failover_away.c).  Were it redone in MPICH
# it would need that rank to start it there: this hung.  Over TCP, once
# at 2 ranks (at 4 on 2 cores MPICH's own MPI_Finalize over TCP hangs in
# about half the runs, with or without acis): MPICH's rendezvous needs
# the waiting rank to let MPICH move, which it did not while the members
# finished a collective (hung too).
for run in 2: 4: 2:self,tcp; do
    np=${run%%:*} tls=${run#*:} tag=$((30 + np + ${#tls}))
    note "after the failure, a rank in MPICH while its peer waits, $np ranks${tls:+, UCX_TLS=$tls}"
    addr=$(start_switchd $tag --listen 127.0.0.1:0) || fail "acis-switchd did not start"
    ( [ -z "$tls" ] || export UCX_TLS="$tls"
      ACIS_TEST_SWITCH_PID=$(cat "$TMPD/sw$tag.pid") MPIR_CVAR_OFFLOAD=on \
          MPIR_CVAR_OFFLOAD_SWITCH=$addr MPIR_CVAR_OFFLOAD_TIMEOUT_MS=1000 \
          MPIR_CVAR_OFFLOAD_CONNECT_MS=500 MPIR_CVAR_OFFLOAD_REJOIN=never \
          MPIR_CVAR_OFFLOAD_VERBOSE=1 ACIS_TEST_TIMEOUT=120 \
          run_mpi "$np" "$TESTS_DIR/failover_away" >"$TMPD/out.$tag" 2>"$TMPD/err.$tag" )
    rc=$?
    shown $tag "$np ranks, a rank away in MPICH" 'its switch failed'
    grep -q "failover_away: $np ranks: ok" "$TMPD/out.$tag" ||
        fail "$np ranks, a rank away in MPICH: not ok"
done
