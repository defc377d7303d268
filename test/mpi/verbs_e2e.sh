#!/bin/sh
# verbs_e2e.sh -- end to end on RDMA hardware: acis-switchd --verbs on the
# first active device port, a 2-rank job with MPIR_CVAR_OFFLOAD_DEVICE=verbs
# and the switch's endpoint; every collective offloaded (coll_check checks
# results against PMPI and the offload counters) and the switch counted
# the segments.  Where the switch cannot open a device it is SKIPPED with
# the switch's own reason (automake's exit 77), never passed.
# ACIS_TEST_VERBS_SWITCH=LID/QPN runs the job against another switch
# (hardware) instead; ACIS_TEST_VERBS_DEVICE picks acis-switchd's device.
. "${top_srcdir:-.}/test/mpi/common.sh"

run_job() {
    MPIR_CVAR_OFFLOAD=on MPIR_CVAR_OFFLOAD_DEVICE=verbs MPIR_CVAR_OFFLOAD_SWITCH=$1 \
        run_mpi 2 "$TESTS_DIR/coll_check" --offload=$ALL --offload-nb=$ALL --matrix=quick
}

# A switch of your own (hardware): every collective through it.
if [ -n "${ACIS_TEST_VERBS_SWITCH:-}" ]; then
    run_job "$ACIS_TEST_VERBS_SWITCH" || fail "job on the switch at $ACIS_TEST_VERBS_SWITCH"
    echo "ok: a job through the verbs switch at $ACIS_TEST_VERBS_SWITCH"
    exit 0
fi

sw="$top_builddir/src/switch/acis-switchd"
"$sw" --verbs "${ACIS_TEST_VERBS_DEVICE:-auto}" --verbose >"$TMPD/sw.out" 2>&1 &
echo $! >"$TMPD/sw1.pid"
for i in $(seq 50); do
    addr=$(sed -n 's/^acis-switchd: listening on verbs \([^ ]*\) .*/\1/p' "$TMPD/sw.out")
    [ -n "$addr" ] && break
    kill -0 "$(cat "$TMPD/sw1.pid")" 2>/dev/null || break
    sleep 0.1
done
if [ -z "$addr" ]; then
    echo "SKIP: no end-to-end verbs run: $(grep -m1 'acis-switchd:' "$TMPD/sw.out")"
    exit 77
fi
note "verbs switch at $addr ($(sed -n 's/.*(\(.*\))$/\1/p' "$TMPD/sw.out"))"
run_job "$addr" || fail "job on the verbs switch"
kill -TERM "$(cat "$TMPD/sw1.pid")"
wait
cat "$TMPD/sw.out"
val() { awk -v k="$1" '$1 == "acis-switchd:" && $2 == k { print $3 }' "$TMPD/sw.out"; }
[ "$(val seg_allreduce)" -gt 0 ] || fail "no allreduce segments in the verbs switch"
[ "$(val drop_malformed)" = 0 ] || fail "the verbs switch dropped malformed packets"
echo "ok: a job through the verbs switch"
