# net.sh -- a cluster inside this machine, for test/cluster/cluster.sh and
# bench/cluster.sh (sourced, not run).  Each host is a network namespace
# with its own hostname (a UTS namespace per command) and one interface,
# eth0, MTU 1500, on a bridge in a namespace of its own; 10.77.0.0/24
# exists only there, with no route out.  /etc/netns/NS/hosts (which
# `ip netns exec` mounts over /etc/hosts) names every host.  Needs root,
# iproute2 and util-linux's unshare.
#
#   cluster_up H1 H2 ...   make the hosts, first = 10.77.0.1, and so on
#   on HOST CMD [ARG...]   run CMD on HOST
#   addr HOST              HOST's address
#   cluster_mpiexec ARG... MPICH's launcher (give -f HOSTFILE), started on
#                          the first host, reaching every other one as over ssh,
#                          through test/cluster/launch
#   switchd_on HOST OUT SWITCHD ARG...
#                          start acis-switchd (path SWITCHD) on HOST in the
#                          background, output in OUT; prints the address
#                          it listens on (fails after 5 s)
#   snmp HOST SECTION FIELD  a kernel counter of HOST (/proc/net/snmp:
#                          Ip FragCreates, Ip ReasmOKs, Udp RcvbufErrors...)
#   cluster_down           remove every namespace, process and file made
#
# Names start with CLUSTER (acis<pid>t<seconds>), so runs side by side,
# or one after a run whose leftovers are still being removed, never meet.
# cluster_usable starts test/cluster/down in a session of its own first,
# which removes all when this shell ends however it ends (also kill -9).
: "${top_srcdir:=.}"
CLUSTER_DIR="$top_srcdir/test/cluster"
CLUSTER=acis$$t$(date +%s)
export CLUSTER
CLUSTER_HOSTS=

# cluster_usable: 0 if a cluster can be made here (what cluster_up does,
# tried on a probe namespace), else prints why.
cluster_usable() {
    [ "$(id -u)" = 0 ] || { echo "not root"; return 1; }
    command -v ip >/dev/null || { echo "no ip (iproute2)"; return 1; }
    command -v unshare >/dev/null || { echo "no unshare (util-linux)"; return 1; }
    setsid sh "$CLUSTER_DIR/down" "$CLUSTER" $$ </dev/null >/dev/null 2>&1 &
    cu_ns=${CLUSTER}probe
    cu_ok=0
    ip netns add "$cu_ns" 2>/dev/null &&
        ip -n "$cu_ns" link add br0 type bridge 2>/dev/null &&
        ip -n "$cu_ns" link add pa type veth peer name pb 2>/dev/null &&
        mkdir -p "/etc/netns/$cu_ns" 2>/dev/null && : 2>/dev/null >"/etc/netns/$cu_ns/hosts" &&
        cu_ok=1
    sh "$CLUSTER_DIR/down" "$CLUSTER"
    [ $cu_ok = 1 ] ||
        { echo "cannot make namespaces, bridges, veths or /etc/netns files here"; return 1; }
    unshare --uts true 2>/dev/null || { echo "unshare --uts fails here"; return 1; }
}

cluster_up() {
    ip netns add "${CLUSTER}net" &&
        ip -n "${CLUSTER}net" link add br0 type bridge &&
        ip -n "${CLUSTER}net" link set br0 up || return 1
    i=0
    for h in "$@"; do
        case "$h" in
        [a-z]*) ;;
        *) echo "cluster_up: '$h' must start with a letter" >&2; return 1 ;;
        esac
        i=$((i + 1))
        ns=$CLUSTER$h
        ip netns add "$ns" &&
            ip link add "v$h" netns "${CLUSTER}net" mtu 1500 type veth peer name eth0 \
                netns "$ns" mtu 1500 &&
            ip -n "${CLUSTER}net" link set "v$h" master br0 up &&
            ip -n "$ns" link set lo up &&
            ip -n "$ns" link set eth0 up &&
            ip -n "$ns" addr add "10.77.0.$i/24" dev eth0 || return 1
        CLUSTER_HOSTS="$CLUSTER_HOSTS $h"
    done
    for h in $CLUSTER_HOSTS; do
        mkdir -p "/etc/netns/$CLUSTER$h"
        {
            echo "127.0.0.1 localhost"
            i=0
            for o in $CLUSTER_HOSTS; do
                i=$((i + 1))
                echo "10.77.0.$i $o"
            done
        } >"/etc/netns/$CLUSTER$h/hosts"
    done
}

addr() {
    i=0
    for o in $CLUSTER_HOSTS; do
        i=$((i + 1))
        [ "$o" = "$1" ] && { echo "10.77.0.$i"; return 0; }
    done
    return 1
}

on() {
    on_h=$1; shift
    ip netns exec "$CLUSTER$on_h" unshare --uts sh -c 'hostname "$0" && exec "$@"' "$on_h" "$@"
}

cluster_mpiexec() {
    cm_first=${CLUSTER_HOSTS# }
    cm_first=${cm_first%% *}
    on "$cm_first" timeout -k 10 "${ACIS_TEST_TIMEOUT:-900}" "${MPIEXEC:-mpiexec.mpich}" \
        -launcher ssh -launcher-exec "$CLUSTER_DIR/launch" -iface eth0 "$@"
}

switchd_on() {
    sd_h=$1 sd_o=$2; shift 2
    # (a subshell's exec, not a redirected function call: dash would keep
    # a caller's command substitution pipe open in the daemon's shell)
    (exec >"$sd_o" 2>&1 </dev/null; on "$sd_h" "$@") &
    for sd_i in $(seq 50); do
        sd_a=$(sed -n 's/^acis-switchd: listening on //p' "$sd_o")
        [ -n "$sd_a" ] && { echo "$sd_a"; return 0; }
        sleep 0.1
    done
    cat "$sd_o" >&2
    return 1
}

snmp() {
    on "$1" cat /proc/net/snmp | awk -v s="$2:" -v f="$3" '
        $1 == s && !n { for (i = 2; i <= NF; i++) col[$i] = i; n = 1; next }
        $1 == s { print $(col[f]) }'
}

cluster_down() {
    sh "$CLUSTER_DIR/down" "$CLUSTER"
}
