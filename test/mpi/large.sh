#!/bin/sh
# large.sh -- collectives past INT32_MAX bytes, at 2 ranks.  v-variants
# whose counts sum past INT32_MAX (about 3 GiB of memory per rank): a
# gatherv and a scatterv, where only the root sees that sum, on the
# shared-memory channel, and an allgatherv over UDP.  The size limit is
# set between a block and the sum: a decision that applied it to what only
# the root sees sent the root to MPICH while the other rank waited in the
# switch (tried: the gatherv hung until killed).  Then a bcast and an
# allreduce of MPI_INT64_T past INT32_MAX bytes (about 4 GiB per rank) on both
# channels, their CVARs on so no size limit applies: with count * size in
# int (tried) the bcast hung and the allreduce was refused by the switch.
# Results are checked and the calls must have been offloaded (large.c).
# Skipped, with the reason, on a machine with less than 10 GiB available.
. "${top_srcdir:-.}/test/mpi/common.sh"
avail=$(awk '/^MemAvailable:/ { print int($2 / 1048576) }' /proc/meminfo)
if [ "${avail:-0}" -lt 10 ]; then
    echo "SKIP: $avail GiB of memory available, 10 needed"
    exit 77
fi
export MPIR_CVAR_OFFLOAD=on MPIR_CVAR_OFFLOAD_MAX_MSG_SIZE=1500M
for run in gatherv:shm scatterv:shm allgatherv:udp bcast:shm allreduce:shm bcast:udp \
    allreduce:udp; do
    coll=${run%:*} dev=${run#*:}
    note "$coll past INT32_MAX, 2 ranks, $dev"
    MPIR_CVAR_OFFLOAD_BCAST=on MPIR_CVAR_OFFLOAD_ALLREDUCE=on \
    MPIR_CVAR_OFFLOAD_DEVICE=$dev ACIS_TEST_TIMEOUT=${ACIS_TEST_TIMEOUT:-300} \
        run_mpi 2 "$TESTS_DIR/large" --coll="$coll" || fail "$coll on $dev"
done
