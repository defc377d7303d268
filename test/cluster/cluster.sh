#!/bin/sh
# cluster.sh -- acis across hosts that are hosts to the kernel: network
# namespaces h1, h2 (ranks) and sw1, sw2 (switches), each with its own
# hostname and address, MTU 1500, on a bridge (test/cluster/net.sh), with
# MPICH's launcher reaching them as over ssh.  Skipped (77) where network
# namespaces cannot be made (not root).  In order:
#   - the embedded switch across hosts: rank 0's switch listens on h1's
#     address (what its name resolves to), which it announces; auto picks the
#     node hierarchy because the hosts differ (hier_check: only node
#     leaders reach the switch); with h1's name on loopback, as Debian
#     writes it, on h1's first interface address instead;
#   - every collective, 2 hosts x 2 ranks, against MPICH, offload proven
#     by the counters (coll_check's quick matrix), with 1 % of packets lost;
#   - datagrams larger than the MTU: the 16 KiB segments of the embedded
#     switch across nodes, and acis-switchd --payload 65000, are cut into
#     IP fragments on the veth links and put together again (the kernel's
#     counters in each namespace must show it) and results stay right;
#   - acis-switchd on sw1, then a second switch on sw2 linked to it with
#     --uplink, ranks on h1 attached to sw1 and on h2 to sw2; the
#     switches forget the job after it; a child with other --payload than
#     its parent is refused with the reason (check_fabric: and takes no
#     port);
#   - a cluster whose test is killed with SIGKILL leaves no namespace,
#     /etc/netns file or process behind.
# (About 75 s: four 4-rank jobs on two cores.)
. "${top_srcdir:-.}/test/mpi/common.sh"
. "$top_srcdir/test/cluster/net.sh"

why=$(cluster_usable) || { echo "SKIP: no test cluster here: $why"; exit 77; }
trap 'cluster_down; cleanup' EXIT
trap 'exit 1' INT TERM HUP
cluster_up h1 h2 sw1 sw2 || fail "could not build the cluster"
printf 'h1:2\nh2:2\n' >"$TMPD/hosts"
SWITCHD="$top_builddir/src/switch/acis-switchd"
INFO="$top_builddir/tools/acis-info"

stats() { on h1 "$INFO" --switch "$1" >"$2" || fail "acis-info --switch $1"; }
val() { awk -v k="$1" '$1 == k { print $2 }' "$2"; }
idle() {
    for i in $(seq 50); do
        stats "$1" "$TMPD/idle"
        [ "$(val jobs "$TMPD/idle")" = 0 ] && [ "$(val tables_in_use "$TMPD/idle")" = 0 ] &&
            [ "$(val ports_in_use "$TMPD/idle")" = 0 ] && return 0
        sleep 0.1
    done
    cat "$TMPD/idle"
    fail "switch $1 still holds the job"
}

note "embedded switch on h1, hierarchy chosen by auto"
MPIR_CVAR_OFFLOAD=on MPIR_CVAR_OFFLOAD_VERBOSE=1 \
    cluster_mpiexec -f "$TMPD/hosts" -n 4 "$TESTS_DIR/hier_check" >"$TMPD/hier" 2>&1 ||
    { cat "$TMPD/hier"; fail "hier_check across hosts"; }
grep 'hier_check' "$TMPD/hier"

note "h1's name on loopback (Debian's 127.0.1.1): the switch takes h1's interface address"
grep -q 'offloading through the switch at 10.77.0.1:' "$TMPD/hier" ||
    fail "the embedded switch was not at h1's address"
hf=/etc/netns/${CLUSTER}h1/hosts
sed 's/^10\.77\.0\.1 h1$/127.0.1.1 h1/' "$hf" >"$TMPD/h1hosts" && cat "$TMPD/h1hosts" >"$hf"
printf 'h1:1\nh2:1\n' >"$TMPD/hosts11"
MPIR_CVAR_OFFLOAD=on MPIR_CVAR_OFFLOAD_VERBOSE=1 \
    cluster_mpiexec -f "$TMPD/hosts11" -n 2 "$TESTS_DIR/coll_check" --offload=allreduce,bcast \
        --colls=allreduce,bcast --matrix=quick --counts=5 >"$TMPD/lo" 2>&1 ||
    { cat "$TMPD/lo"; fail "coll_check with h1's name on loopback"; }
sed 's/^127\.0\.1\.1 h1$/10.77.0.1 h1/' "$TMPD/h1hosts" >"$hf"
grep -q 'offloading through the switch at 10.77.0.1:' "$TMPD/lo" ||
    { cat "$TMPD/lo"; fail "the switch was not at h1's interface address"; }
grep '^coll_check:' "$TMPD/lo"

note "every collective, 2 hosts x 2 ranks, embedded switch, 1 % loss"
r0=$(snmp h2 Ip ReasmOKs)
MPIR_CVAR_OFFLOAD=on MPIR_CVAR_OFFLOAD_FAULT_DROP=0.01 \
    cluster_mpiexec -f "$TMPD/hosts" -n 4 "$TESTS_DIR/coll_check" --offload=$ALL \
        --offload-nb=$ALL --matrix=quick --counts=5,3000 ||
    fail "coll_check across hosts"
r1=$(snmp h2 Ip ReasmOKs)
[ "$r1" -gt "$r0" ] || fail "no datagram from h1 was reassembled on h2 ($r0 -> $r1)"
echo "ok: $((r1 - r0)) datagrams reassembled from fragments on h2"

note "acis-switchd on sw1, 65000-byte segments"
a1=$(switchd_on sw1 "$TMPD/sw1.out" "$SWITCHD" --listen "$(addr sw1):0" --payload 65000 \
    --links 2) || fail "no switch on sw1"
f0=$(snmp sw1 Ip FragCreates)
MPIR_CVAR_OFFLOAD=on MPIR_CVAR_OFFLOAD_SWITCH=$a1 \
    cluster_mpiexec -f "$TMPD/hosts" -n 4 "$TESTS_DIR/coll_check" --offload=$ALL \
        --offload-nb=$ALL --matrix=quick --counts=5,3000 ||
    fail "coll_check on acis-switchd at $a1"
f1=$(snmp sw1 Ip FragCreates)
[ "$f1" -gt "$f0" ] || fail "sw1 cut no datagram into fragments"
stats "$a1" "$TMPD/s1"
[ "$(val seg_allreduce "$TMPD/s1")" -gt 0 ] || fail "no allreduce segments at sw1"
[ "$(val unsealed "$TMPD/s1")" = 0 ] || fail "sw1, not on loopback, took packets unsealed"
idle "$a1"
echo "ok: sw1 made $((f1 - f0)) fragments; $(val segments "$TMPD/s1") segments"

note "sw2 linked to sw1 (--uplink); h1 on sw1, h2 on sw2"
# A child whose packets differ from its parent's is refused at once (its
# rows would be refused at every set-up).
on sw2 "$SWITCHD" --listen "$(addr sw2):0" --uplink "$a1" >"$TMPD/mismatch" 2>&1 &&
    fail "sw2 linked with 16384-byte packets under sw1's 65000"
grep -q 'give both the same --payload' "$TMPD/mismatch" ||
    { cat "$TMPD/mismatch"; fail "no reason"; }
a2=$(switchd_on sw2 "$TMPD/sw2.out" "$SWITCHD" --listen "$(addr sw2):0" --payload 65000 \
    --uplink "$a1") ||
    fail "sw2 did not link"
NOSCAN=barrier,bcast,reduce,allreduce,gather,gatherv,scatter,scatterv,allgather,allgatherv
NOSCAN=$NOSCAN,reduce_scatter,reduce_scatter_block
prog="$TESTS_DIR/coll_check --offload=$NOSCAN --offload-nb=$NOSCAN --matrix=quick --counts=5,3000"
cluster_mpiexec -f "$TMPD/hosts" \
    -n 2 env MPIR_CVAR_OFFLOAD=on MPIR_CVAR_OFFLOAD_SWITCH="$a1" $prog : \
    -n 2 env MPIR_CVAR_OFFLOAD=on MPIR_CVAR_OFFLOAD_SWITCH="$a2" $prog ||
    fail "coll_check on two linked switches"
stats "$a2" "$TMPD/s2"
[ "$(val link_up "$TMPD/s2")" -gt 0 ] || fail "sw2 sent nothing up to sw1"
[ "$(val unsealed "$TMPD/s2")" = 0 ] || fail "sw2, not on loopback, took packets unsealed"
idle "$a1"
idle "$a2"
echo "ok: sw2 sent $(val link_up "$TMPD/s2") segments up"

note "a cluster whose test is killed (SIGKILL) is removed"
sh -c '. "$top_srcdir/test/cluster/net.sh"; cluster_usable >/dev/null && cluster_up k1 k2 &&
    echo "$CLUSTER" >"$1" && on k1 sleep 600' killed "$TMPD/killed" &
kpid=$!
for i in $(seq 50); do
    [ -s "$TMPD/killed" ] && ip netns pids "$(cat "$TMPD/killed")k1" | grep -q . && break
    sleep 0.1
done
k=$(cat "$TMPD/killed")
[ "$(ip netns list | grep -c "^${k}[a-z]")" = 3 ] || fail "the killed test's cluster was not up"
left=$(ip netns pids "${k}k1")
kill -9 $kpid
for i in $(seq 50); do
    ip netns list | grep -q "^${k}[a-z]" || break
    sleep 0.2
done
ip netns list | grep "^${k}[a-z]" && fail "namespaces of $k left behind"
ls /etc/netns 2>/dev/null | grep "^${k}[a-z]" && fail "/etc/netns files of $k left behind"
for p in $left; do        # (a zombie is dead: its reaper is init, not us)
    st=$(sed -n 's/^.*) \(.\).*/\1/p' "/proc/$p/stat" 2>/dev/null)
    [ -n "$st" ] && [ "$st" != Z ] && fail "process $p of $k left behind ($st)"
done
echo "ok: $k removed after kill -9 (its process $left too)"
