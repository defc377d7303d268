#!/bin/sh
# osu_persistent.sh -- OSU 7.4's persistent collective benchmarks with their
# own validation (-c) under acis, on shm and udp, at 2 and 4 ranks, and the
# counters that say where each start ran.  OSU is not a Debian package: build
# it outside this tree (./configure CC=mpicc.mpich CXX=mpicxx.mpich; make)
# and pass its build directory.  Prints one line per run; exits 1 if a size
# that should pass did not, or a start that should run in the switch did not.
#
#   bench/osu_persistent.sh OSU_BUILD_DIR [LIBACIS]
#
# OSU starts its one request per size in order on every rank, so the runs
# say so (MPIR_CVAR_OFFLOAD_PERSISTENT_ORDER=strict); without it acis
# leaves persistent collectives to MPICH, as MPI-4.0 lets starts come in any
# order.  Expected (docs/performance.md, "Persistent collectives"):
#   - every benchmark but allreduce: Pass at every size, and its MPI_*_init
#     calls all offloaded (software 0) with MPI_Start counted;
#   - allreduce: OSU 7.4's -c fails on any MPI (it validates a buffer its
#     request never writes); the counters are checked, the sizes reported;
#   - gatherv and scatterv: the first start of each request runs in MPICH
#     while the block sizes travel, every later one in the switch;
#   - barrier: no -c in OSU 7.4; the counters only.
set -u
osu=${1:?usage: bench/osu_persistent.sh OSU_BUILD_DIR [LIBACIS]}
lib=${2:-$(cd "$(dirname "$0")/.." && pwd)/build/.libs/libacis.so}
dir=$osu/c/mpi/collective/persistent
[ -x "$dir/osu_bcast_persistent" ] || { echo "no OSU persistent benchmarks in $dir" >&2; exit 2; }
[ -f "$lib" ] || { echo "no $lib: build acis first" >&2; exit 2; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
bad=0
for np in 2 4; do
    for dev in shm udp; do
        for b in bcast reduce reduce_scatter gather scatter allgather allgatherv gatherv \
                 scatterv allreduce barrier; do
            c=-c
            [ $b = barrier ] && c=
            MPIR_CVAR_OFFLOAD=on MPIR_CVAR_OFFLOAD_DEVICE=$dev MPIR_CVAR_OFFLOAD_STATS=1 \
                MPIR_CVAR_OFFLOAD_PERSISTENT_ORDER=strict \
                LD_PRELOAD=$lib timeout 300 mpiexec.mpich -n $np \
                "$dir/osu_${b}_persistent" $c -m 4:65536 -i 50 -x 5 >"$out" 2>&1
            rc=$?
            pass=$(grep -c ' Pass$' "$out") fail=$(grep -c ' Fail$' "$out")
            init=$(grep -i "acis: MPI_${b}_init " "$out" | awk '{ print $4, $5 }')
            starts=$(awk '$2 == "MPI_Start" { print $3 }' "$out")
            printf '%-15s np=%d %-3s rc=%d pass=%-2s fail=%-2s init offloaded/software=%s starts=%s\n' \
                "$b" "$np" "$dev" "$rc" "$pass" "$fail" "${init:-none}" "${starts:-0}"
            want_pass=1
            [ $b = allreduce ] || [ $b = barrier ] && want_pass=0
            if [ $rc != 0 ] && [ $b != allreduce ]; then bad=1; tail -5 "$out"; fi
            [ $want_pass = 1 ] && { [ "$fail" = 0 ] && [ "$pass" -gt 0 ] || bad=1; }
            soft=${init#* }
            [ -n "$init" ] && [ "$soft" = 0 ] && [ "${starts:-0}" -gt 0 ] || bad=1
        done
    done
done
exit $bad
