#!/bin/sh
# large.sh -- v-variant collectives whose counts sum past INT32_MAX, at 2
# ranks (about 3 GiB of memory per rank): a gatherv and a scatterv, where
# only the root sees that sum, on the shared-memory channel, and an
# allgatherv over UDP.  Results are checked and the calls must have been
# offloaded (large.c).  The size limit is set between a block and the sum:
# a decision that applied it to what only the root sees sent the root to
# MPICH while the other rank waited in the switch (tried: the gatherv hung
# until killed).  Skipped, with the reason, on a machine with less than
# 8 GiB available.
. "${top_srcdir:-.}/test/mpi/common.sh"
avail=$(awk '/^MemAvailable:/ { print int($2 / 1048576) }' /proc/meminfo)
if [ "${avail:-0}" -lt 8 ]; then
    echo "SKIP: $avail GiB of memory available, 8 needed"
    exit 77
fi
export MPIR_CVAR_OFFLOAD=on MPIR_CVAR_OFFLOAD_MAX_MSG_SIZE=1500M
for run in gatherv:shm scatterv:shm allgatherv:udp; do
    coll=${run%:*} dev=${run#*:}
    note "$coll, counts summing past INT32_MAX, 2 ranks, $dev"
    MPIR_CVAR_OFFLOAD_DEVICE=$dev ACIS_TEST_TIMEOUT=${ACIS_TEST_TIMEOUT:-300} \
        run_mpi 2 "$TESTS_DIR/large" --coll="$coll" || fail "$coll on $dev"
done
