#!/bin/sh
# fabric.sh -- 4-rank jobs on fabrics of linked switches, each rank on the
# switch it is attached to (an MPMD launch gives each its own
# MPIR_CVAR_OFFLOAD_SWITCH): a fat tree of two leaves under a spine, three
# separate acis-switchd linked with --uplink, and a 2x2x1 torus (a switch
# per rank) from one acis-switchd --fabric.  Every collective is checked
# against MPICH; all but scans are offloaded (a fabric has no prefixes:
# they stay in software, as coll_check expects), and the counters show
# segments combined in more than one switch; afterwards no switch holds
# the job.  Two 2-rank jobs at once on the same fat tree; the fat tree
# again with packets lost and doubled on every link, hosts' and switches'
# alike; the spine, then a leaf, killed in the middle of a run
# (switch_kill.c: the members finish what was in flight, results right,
# no hang); ranks that disagree on auto; and a job the top refuses, whose
# hosts on the leaf must hear why; members whose calls do not match must
# all get errors.
# (About 90 s: three fabrics of daemons, 4-rank jobs on each, one lossy.)
. "${top_srcdir:-.}/test/mpi/common.sh"

NOSCAN=barrier,bcast,reduce,allreduce,gather,gatherv,scatter,scatterv,allgather,allgatherv
NOSCAN=$NOSCAN,reduce_scatter,reduce_scatter_block
GEOM="--payload 4096 --tables 16 --slots 256"

# run4 A0 A1 A2 A3: coll_check on 4 ranks, rank i attached to switch Ai
# ($EXTRA: more coll_check arguments).
run4() {
    set -- "$TESTS_DIR/coll_check" --offload=$NOSCAN --offload-nb=$NOSCAN --matrix=quick \
        "$1" "$2" "$3" "$4"
    prog="$1 $2 $3 $4 ${EXTRA:-}"
    shift 4
    spec=""
    for a in "$@"; do
        spec="$spec${spec:+ : }-n 1 env MPIR_CVAR_OFFLOAD=on MPIR_CVAR_OFFLOAD_SWITCH=$a $prog"
    done
    # shellcheck disable=SC2086
    timeout -k 10 "${ACIS_TEST_TIMEOUT:-900}" "$MPIEXEC" $spec
}

stats() {   # stats ADDR FILE
    "$top_builddir/tools/acis-info" --switch "$1" >"$2" || fail "acis-info --switch $1"
}
val() { awk -v k="$1" '$1 == k { print $2 }' "$2"; }

# idle_soon ADDR: the switch forgets the job within 5 s (over lossy links a
# leave is told again until the parent confirms it, every 100 ms or so,
# and the job with its rows stays until then).
idle_soon() {
    for i in $(seq 50); do
        stats "$1" "$TMPD/soon"
        [ "$(val jobs "$TMPD/soon")" = 0 ] && [ "$(val tables_in_use "$TMPD/soon")" = 0 ] &&
            break
        sleep 0.1
    done
    idle "$TMPD/soon"
}

idle() {    # idle FILE: the switch forgot the job
    [ "$(val jobs "$1")" = 0 ] && [ "$(val ports_in_use "$1")" = 0 ] &&
        [ "$(val tables_in_use "$1")" = 0 ] || { cat "$1"; fail "$1 still holds the job"; }
    [ "$(val drop_malformed "$1")" = 0 ] || fail "$1: malformed packets"
}

note "fat tree: spine and two leaves, separate daemons"
spine=$(start_switchd spine $GEOM --links 2) || fail "spine did not start"
leaf0=$(start_switchd leaf0 $GEOM --uplink "$spine") || fail "leaf 0 did not link"
leaf1=$(start_switchd leaf1 $GEOM --uplink "$spine") || fail "leaf 1 did not link"
run4 "$leaf0" "$leaf0" "$leaf1" "$leaf1" || fail "job on the fat tree"
stats "$spine" "$TMPD/spine"
stats "$leaf0" "$TMPD/leaf0"
stats "$leaf1" "$TMPD/leaf1"
for f in leaf0 leaf1; do
    [ "$(val link_up "$TMPD/$f")" -gt 0 ] || fail "$f sent nothing up"
    [ "$(val link_up "$TMPD/$f")" = "$(val link_down "$TMPD/$f")" ] ||
        fail "$f: answers down differ from segments up"
    [ "$(val elements_reduced "$TMPD/$f")" -gt 0 ] || fail "$f combined nothing"
    idle "$TMPD/$f"
done
[ "$(val elements_reduced "$TMPD/spine")" -gt 0 ] || fail "the spine combined nothing"
[ "$(val seg_allgather "$TMPD/spine")" -gt 0 ] || fail "no allgather at the spine"
[ "$(val link_up "$TMPD/spine")" = 0 ] || fail "the spine has no parent"
idle "$TMPD/spine"
echo "ok: fat tree, $(val segments "$TMPD/spine") segments at the spine," \
     "$(val link_up "$TMPD/leaf0") and $(val link_up "$TMPD/leaf1") sent up by the leaves"

note "fat tree: members whose calls do not match (disagree.c) get errors, no hang"
# the spine answers a leaf whose segment does not match ERROR, and the
# leaf its hosts (protocol.md, Members that disagree); before, ranks on
# the other leaf heard "pending" forever
spec=""
for a in "$leaf0" "$leaf0" "$leaf1" "$leaf1"; do
    spec="$spec${spec:+ : }-n 1 env MPIR_CVAR_OFFLOAD=on MPIR_CVAR_OFFLOAD_SWITCH=$a"
    spec="$spec $TESTS_DIR/disagree"
done
# shellcheck disable=SC2086
timeout -k 10 120 "$MPIEXEC" $spec 2>"$TMPD/dis.err" >"$TMPD/dis.out" ||
    { tail -20 "$TMPD/dis.err"; fail "disagreeing members on the fat tree"; }
grep -q "recovery after a switch failure" "$TMPD/dis.err" &&
    fail "a member took the disagreement for a switch failure"
for a in "$spine" "$leaf0" "$leaf1"; do
    idle_soon "$a"
done

note "two jobs at once on the fat tree, each rank 0 on leaf 0 and rank 1 on leaf 1"
before=$(val tables_created "$TMPD/spine")
two() {   # two OUT: a 2-rank job across the leaves
    timeout -k 10 "${ACIS_TEST_TIMEOUT:-900}" "$MPIEXEC" \
        -n 1 env MPIR_CVAR_OFFLOAD=on MPIR_CVAR_OFFLOAD_SWITCH="$leaf0" "$TESTS_DIR/coll_check" \
            --offload=$NOSCAN --offload-nb=$NOSCAN --matrix=quick --counts=1,1000 : \
        -n 1 env MPIR_CVAR_OFFLOAD=on MPIR_CVAR_OFFLOAD_SWITCH="$leaf1" "$TESTS_DIR/coll_check" \
            --offload=$NOSCAN --offload-nb=$NOSCAN --matrix=quick --counts=1,1000 >"$1" 2>&1
}
two "$TMPD/job1" & p1=$!
two "$TMPD/job2" & p2=$!
wait $p1 || { cat "$TMPD/job1"; fail "job 1 of two"; }
wait $p2 || { cat "$TMPD/job2"; fail "job 2 of two"; }
grep -h 'cases, 0 failures' "$TMPD/job1" "$TMPD/job2"
stats "$spine" "$TMPD/spine"
[ "$(val tables_created "$TMPD/spine")" -gt "$before" ] || fail "no rows for the two jobs"
idle "$TMPD/spine"
echo "ok: two jobs at once, each checked by its own counters"

note "torus 2x2x1: one acis-switchd --fabric"
"$top_builddir/src/switch/acis-switchd" --fabric torus:2x2x1 $GEOM >"$TMPD/swtorus.out" 2>&1 &
echo $! >"$TMPD/swtorus.pid"
for i in $(seq 50); do
    grep -q 'fabric .* ready' "$TMPD/swtorus.out" && break
    sleep 0.1
done
grep -q 'fabric .* ready' "$TMPD/swtorus.out" || { cat "$TMPD/swtorus.out"; fail "no torus"; }
set -- $(sed -n 's/^acis-switchd: switch [0-9]* listening on \([^ ]*\).*/\1/p' \
    "$TMPD/swtorus.out")
[ $# = 4 ] || fail "the torus has $# switches with hosts, not 4"
run4 "$1" "$2" "$3" "$4" || fail "job on the torus"
ups=0
for a in "$@"; do
    stats "$a" "$TMPD/t"
    [ "$(val link_up "$TMPD/t")" -gt 0 ] && ups=$((ups + 1))
    idle "$TMPD/t"
done
[ "$ups" = 3 ] || fail "$ups switches of the torus sent segments up, not 3"
echo "ok: torus, 3 of 4 switches combined and sent up"

note "fat tree, 2% of every switch's packets lost and 1% doubled"
FAULTS="--fault-drop 0.02 --fault-dup 0.01 --fault-seed 3"
fspine=$(start_switchd fspine $GEOM $FAULTS --links 2) || fail "spine did not start"
fleaf0=$(start_switchd fleaf0 $GEOM $FAULTS --uplink "$fspine") || fail "leaf 0 did not link"
fleaf1=$(start_switchd fleaf1 $GEOM $FAULTS --uplink "$fspine") || fail "leaf 1 did not link"
EXTRA=--counts=1,100,3000 run4 "$fleaf0" "$fleaf0" "$fleaf1" "$fleaf1" ||
    fail "job on the lossy fat tree"
for a in "$fspine" "$fleaf0" "$fleaf1"; do
    stats "$a" "$TMPD/f"
    [ "$(val repeats "$TMPD/f")" -gt 0 ] || fail "$a: no loss was repaired"
    [ "$(val tables_refused "$TMPD/f")" = 0 ] || fail "$a refused a row"
    idle_soon "$a"
done
echo "ok: lossy fat tree"

# kill_in_tree WHICH: a fresh fat tree whose spine or leaf0 dies at
# iteration 8 of switch_kill at 4 ranks.
kill_in_tree() {
    ks=$(start_switchd "k$1s" $GEOM --links 2) || fail "spine did not start"
    k0=$(start_switchd "k$1l0" $GEOM --uplink "$ks") || fail "leaf 0 did not link"
    k1=$(start_switchd "k$1l1" $GEOM --uplink "$ks") || fail "leaf 1 did not link"
    case $1 in spine) victim=$(cat "$TMPD/swk$1s.pid") ;; *) victim=$(cat "$TMPD/swk$1l0.pid") ;; esac
    env="ACIS_TEST_SWITCH_PID=$victim MPIR_CVAR_OFFLOAD=on MPIR_CVAR_OFFLOAD_TIMEOUT_MS=1000"
    env="$env MPIR_CVAR_OFFLOAD_CONNECT_MS=500 MPIR_CVAR_OFFLOAD_REJOIN=never"
    env="$env MPIR_CVAR_OFFLOAD_VERBOSE=1"
    prog="$TESTS_DIR/switch_kill --kill-at=8 --iters=24"
    # shellcheck disable=SC2086
    timeout -k 10 "${ACIS_TEST_TIMEOUT:-900}" "$MPIEXEC" \
        -n 2 env $env MPIR_CVAR_OFFLOAD_SWITCH="$k0" $prog : \
        -n 2 env $env MPIR_CVAR_OFFLOAD_SWITCH="$k1" $prog >"$TMPD/kout" 2>"$TMPD/kerr" ||
        { tail -20 "$TMPD/kerr"; fail "$1 killed: the job failed or hung"; }
    grep -q 'switch_kill: ok' "$TMPD/kout" || { cat "$TMPD/kout"; fail "$1 killed: not ok"; }
    [ "$(grep -c 'the switch failed' "$TMPD/kerr")" = 4 ] ||
        { cat "$TMPD/kerr"; fail "$1 killed: not every rank saw the failure"; }
    echo "ok: $1 killed, $(grep 'finished by the members' "$TMPD/kout")"
}
note "the spine dies mid-run: its leaves stop saying they are alive"
kill_in_tree spine
note "a leaf dies mid-run: its members find it, the others hear from them"
kill_in_tree leaf

note "auto on one rank, an address on the other"
MPIR_CVAR_OFFLOAD=on MPIR_CVAR_OFFLOAD_VERBOSE=1 timeout 120 "$MPIEXEC" \
    -n 1 env MPIR_CVAR_OFFLOAD_SWITCH=auto "$TESTS_DIR/coll_check" --matrix=quick --counts=3 : \
    -n 1 env MPIR_CVAR_OFFLOAD_SWITCH="$spine" "$TESTS_DIR/coll_check" --matrix=quick --counts=3 \
    >"$TMPD/out" 2>"$TMPD/err" || { cat "$TMPD/err"; fail "mixed switches: the job failed"; }
grep -q 'collectives run in MPICH: MPIR_CVAR_OFFLOAD_SWITCH is auto on some ranks' "$TMPD/err" ||
    { cat "$TMPD/err"; fail "mixed switches: no reason given"; }
echo "ok: $(grep 'collectives run in MPICH' "$TMPD/err")"

note "a job the top refuses: the leaf's waiting hosts hear why"
# The spine tracks one job; a second job on its leaf waits for the top's
# word and is refused.  The leaf answers each waiting host NO_PORT and
# lets its port go in the same batch (udp.c must keep the address it
# answers to), so MPI_Init says "refused", not "did not answer".
rs=$(start_switchd rs $GEOM --links 1 --jobs 1) || fail "no spine for the refusal"
rl=$(start_switchd rl $GEOM --uplink "$rs") || fail "the leaf did not link"
MPIR_CVAR_OFFLOAD=on MPIR_CVAR_OFFLOAD_SWITCH=$rl run_mpi 2 "$TESTS_DIR/coll_check" \
    --offload=$NOSCAN --offload-nb=$NOSCAN --matrix=quick >"$TMPD/ra" 2>&1 &
ra=$!
for i in $(seq 100); do
    "$top_builddir/tools/acis-info" --switch "$rs" >"$TMPD/rs" 2>/dev/null &&
        [ "$(awk '$1 == "jobs" { print $2 }' "$TMPD/rs")" = 1 ] && break
    sleep 0.1
done
[ "$(awk '$1 == "jobs" { print $2 }' "$TMPD/rs")" = 1 ] || fail "the first job never reached the spine"
MPIR_CVAR_OFFLOAD=on MPIR_CVAR_OFFLOAD_SWITCH=$rl run_mpi 2 "$TESTS_DIR/coll_check" \
    --matrix=quick --counts=3 >"$TMPD/rb" 2>&1 || { cat "$TMPD/rb"; fail "the refused job failed"; }
wait $ra || { cat "$TMPD/ra"; fail "the first job failed"; }
grep -q 'refused to join: no free host port' "$TMPD/rb" ||
    { cat "$TMPD/rb"; fail "the refused job was not told why"; }
echo "ok: $(grep -m1 'collectives run in MPICH' "$TMPD/rb")"
