#!/bin/sh
# soak.sh -- the bounded soak: 60 000 random collectives (collective,
# communicator, type, operation, size, root, in place) at 2 ranks under 1 %
# packet loss on every host and on the switch, each compared with plain
# MPICH; then 6 000 at 4 ranks.  Nearly all must run in the switch, and
# the loss must show as retransmissions; then 30 000 and 3 000 on the
# shared-memory channel, without loss.  bench/soak.sh runs longer ones.
# (60 s here: CI's time is shared; it ran 100 000 and 10 000 until 2026-11-27.)
. "${top_srcdir:-.}/test/mpi/common.sh"

soak() {       # soak NP COUNT SEED (the UDP channel, packets lost)
    MPIR_CVAR_OFFLOAD=on MPIR_CVAR_OFFLOAD_DEVICE=udp MPIR_CVAR_OFFLOAD_FAULT_DROP=0.01 MPIR_CVAR_OFFLOAD_FAULT_SEED=$3 \
        run_mpi "$1" "$TESTS_DIR/soak" --count="$2" --seed="$3" --min-offloaded=99 \
        >"$TMPD/out" 2>"$TMPD/err"
    rc=$?
    cat "$TMPD/out"
    [ $rc = 0 ] || { head -20 "$TMPD/err"; fail "soak at $1 ranks"; }
    grep -q ' 0 retransmissions' "$TMPD/out" && fail "no retransmissions under 1 % loss"
    return 0
}
soak 2 60000 11
soak 4 6000 12
note "shared-memory channel: 30 000 at 2 ranks, 3 000 at 4"
for run in "2 30000 13" "4 3000 14"; do
    set -- $run
    MPIR_CVAR_OFFLOAD=on MPIR_CVAR_OFFLOAD_DEVICE=shm \
        run_mpi "$1" "$TESTS_DIR/soak" --count="$2" --seed="$3" --min-offloaded=99 ||
        fail "shm soak at $1 ranks"
done
