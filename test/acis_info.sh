#!/bin/sh
# acis_info.sh -- acis-info answers the questions of issue 13 in both
# renderings: its --json parses (jq) and holds the build, every CVAR with
# its value and source, the node, the table cost per communicator size,
# and the configured switch -- answering (a running acis-switchd, with
# its counters), not answering, embedded, or a verbs endpoint (with the
# device port the channel would use, or why none); a malformed CVAR is
# named and makes it exit 1, as MPI_Init would stop; the table cost per
# switch of a fabric (--ct-size --topology), and that a switch holds what
# a hardware switch could: at 65,536 ranks on a fat tree of radix 512
# and on a 64x32x32 torus a row is at most 128 bytes, the pool (the most
# a switch's buffers ever take) at most 64 MiB, and the communicator fits.
# (That these figures are what a switch allocates: check_fabric.)
. "${top_srcdir:-.}/test/mpi/common.sh"
INFO="$top_builddir/tools/acis-info"
command -v jq >/dev/null || fail "jq is missing (scripts/deps installs it)"
ncv=$(grep -c '^ACIS_CVAR(' "$top_srcdir/src/util/cvars.def")

note "defaults, embedded switch"
"$INFO" --json >"$TMPD/a.json" || fail "acis-info --json failed"
jq -e --argjson n "$ncv" '
    .build.version != null and (.build.channels | index("udp")) != null and
    (.cvars | length) == $n and
    (.cvars[] | select(.name == "MPIR_CVAR_OFFLOAD") | .value == "auto" and .from == "default") and
    .switch.kind == "embedded" and .node.pus >= 1 and
    (.table.per_communicator | length) == 5 and
    (.table.per_communicator[0].state_bytes == .table.per_communicator[4].state_bytes) and
    (.table.per_communicator[0].switch_bytes == .table.per_communicator[4].switch_bytes)
' "$TMPD/a.json" >/dev/null || { cat "$TMPD/a.json"; fail "defaults report"; }

note "a running acis-switchd, a CVAR from the environment, one communicator size"
addr=$(start_switchd 1 --listen 127.0.0.1:0) || fail "acis-switchd did not start"
MPIR_CVAR_OFFLOAD_SWITCH=$addr MPICH_OFFLOAD_VERBOSE=2 "$INFO" --json --comm-size 64 \
    >"$TMPD/b.json" || fail "acis-info with a switch failed"
jq -e '
    .switch.kind == "acis-switchd" and .switch.reachable == true and
    .switch.counters.tables_capacity > 0 and
    (.cvars[] | select(.name == "MPIR_CVAR_OFFLOAD_VERBOSE") |
        .value == "2" and .from == "MPICH_OFFLOAD_VERBOSE") and
    (.table.per_communicator | length) == 1 and .table.per_communicator[0].ranks == 64
' "$TMPD/b.json" >/dev/null || { cat "$TMPD/b.json"; fail "switch report"; }

note "a switch that does not answer"
MPIR_CVAR_OFFLOAD_SWITCH=127.0.0.1:9 MPIR_CVAR_OFFLOAD_CONNECT_MS=200 "$INFO" --json \
    >"$TMPD/c.json" || fail "acis-info with a dead switch failed"
jq -e '.switch.reachable == false and (.switch.error | length) > 0' "$TMPD/c.json" \
    >/dev/null || { cat "$TMPD/c.json"; fail "dead switch report"; }

note "a verbs switch: the device port this process would use, or why not"
MPIR_CVAR_OFFLOAD_SWITCH=7/0x1a2b "$INFO" --json >"$TMPD/v.json" || fail "acis-info, verbs"
jq -e '.switch.kind == "verbs" and
    (if (.build.channels | index("verbs")) == null then
        (.switch.verbs_error | test("built without libibverbs"))
     elif .build.rdma_devices == "none" then
        (.switch.verbs_error | test("no RDMA device found"))
     else ((.switch.verbs_port // .switch.verbs_error) | length) > 0 end)
' "$TMPD/v.json" >/dev/null || { cat "$TMPD/v.json"; fail "verbs switch report"; }

note "a malformed CVAR"
MPIR_CVAR_OFFLOAD_WAIT=sometimes "$INFO" --json >"$TMPD/d.json" &&
    fail "a malformed CVAR did not make acis-info fail"
jq -e '.cvar_error | test("MPIR_CVAR_OFFLOAD_WAIT")' "$TMPD/d.json" >/dev/null ||
    { cat "$TMPD/d.json"; fail "the error does not name the variable"; }

note "what a communicator costs each switch of a fabric"
"$INFO" --ct-size --json --topology torus:4x4x4 >"$TMPD/t.json" || fail "--ct-size --topology"
jq -e '
    .table.switches == 64 and .table.host_ports == 64 and
    (.table.per_communicator | length) == 5 and
    .table.per_communicator[1].fits == true and .table.per_communicator[1].max_children <= 7 and
    .table.per_communicator[1].switches > 1 and .table.per_communicator[2].fits == false and
    .build == null
' "$TMPD/t.json" >/dev/null || { cat "$TMPD/t.json"; fail "ct-size report"; }
"$INFO" --ct-size --topology ring 2>"$TMPD/err" && fail "a bad topology passed"
grep -q "use star, fattree" "$TMPD/err" || { cat "$TMPD/err"; fail "bad topology: no reason"; }

note "65,536 ranks on a fat tree of radix 512 and on a 64x32x32 torus"
for topo in fattree:leaves=256,spines=128,radix=512 torus:64x32x32; do
    "$INFO" --ct-size --json --topology $topo --comm-size 65536 >"$TMPD/big.json" ||
        fail "--ct-size $topo"
    jq -e '.table.per_communicator[0] | .fits == true and .state_bytes <= 128 and
        .buffer_bytes_worst <= 67108864 and .window >= 1 and .switch_bytes <= 67108864
    ' "$TMPD/big.json" >/dev/null || { cat "$TMPD/big.json"; fail "65536 ranks on $topo"; }
    jq -c '.table.per_communicator[0]' "$TMPD/big.json"
done

note "text"
"$INFO" --no-switch >"$TMPD/t.txt" || fail "acis-info (text) failed"
grep -q '^cvars:' "$TMPD/t.txt" && grep -q 'name: MPIR_CVAR_OFFLOAD_STATS' "$TMPD/t.txt" &&
    grep -q '^table:' "$TMPD/t.txt" || { cat "$TMPD/t.txt"; fail "text report"; }
echo "ok: acis-info answers in text and JSON"
