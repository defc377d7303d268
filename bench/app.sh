#!/bin/sh
# app.sh -- the application-shaped benchmark (bench/app.c: small
# allreduces along grid rows, bcasts down columns, a residual on
# MPI_COMM_WORLD every ten steps) run in one go on plain MPICH and through
# acis on each channel, alternated REPS times; prints the median time per
# step of each, the ratio to MPICH, the checksums (which must agree) and
# acis's offloaded-call count (so a silent fallback cannot pass).
#
# usage: [CONFIGS="..."] bench/app.sh [BUILD_DIR] [NP] [STEPS] [REPS]
#   CONFIGS  default "mpich acis-shm acis-udp"; also acis-udp-node and
#            acis-udp-flat (the UDP channel with MPIR_CVAR_OFFLOAD_HIERARCHY
#            node or flat; run with MPIR_CVAR_ODD_EVEN_CLIQUES=1 to have
#            MPICH fake two nodes on one machine).
set -eu
build=$(cd "${1:-build}" && pwd)
np=${2:-4}
steps=${3:-20000}
reps=${4:-3}
MPIEXEC=${MPIEXEC:-mpiexec.mpich}
app="$build/bench/app"
lib="$build/.libs/libacis.so"
[ -x "$app" ] && [ -f "$lib" ] || { echo "build first (scripts/build)" >&2; exit 1; }
[ "$np" -gt "$(nproc)" ] && steps=$((steps / 20))    # MPICH busy-polls oversubscribed
configs=${CONFIGS:-mpich acis-shm acis-udp}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "# CONFIGS=\"$configs\" bench/app.sh $*: $np ranks, $steps steps, $reps repetitions, $(date -u '+%F %H:%M') UTC, $(nproc) cores"
for r in $(seq "$reps"); do
    for cfg in $configs; do
        echo "[$r/$reps] $cfg" >&2
        dev=${cfg#acis-}
        hier=auto
        case $dev in *-node) hier=node dev=${dev%-node} ;; *-flat) hier=flat dev=${dev%-flat} ;; esac
        case $cfg in
        mpich) env "$MPIEXEC" -n "$np" "$app" -s "$steps" >>"$tmp/$cfg" ;;
        acis-*) env LD_PRELOAD="$lib" MPIR_CVAR_OFFLOAD=on MPIR_CVAR_OFFLOAD_STATS=1 \
                    MPIR_CVAR_OFFLOAD_DEVICE="$dev" MPIR_CVAR_OFFLOAD_HIERARCHY="$hier" \
                    "$MPIEXEC" -n "$np" "$app" -s "$steps" >>"$tmp/$cfg" 2>"$tmp/$cfg.stats"
                grep -E 'MPI_(Allreduce|Bcast) ' "$tmp/$cfg.stats" |
                    awk '{ c += $3; o += $4 } END { print c, o }' >>"$tmp/$cfg.count" ;;
        esac
    done
done
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
base=$(awk '{ print $3 }' "$tmp/mpich" | median)
printf '| configuration | us per step (median) | ratio to MPICH | checksum | offloaded / calls |\n'
printf '|---|---:|---:|---|---:|\n'
for cfg in $configs; do
    m=$(awk '{ print $3 }' "$tmp/$cfg" | median)
    sum=$(awk '{ print $4 }' "$tmp/$cfg" | sort -u | tr '\n' ' ')
    cnt=-
    [ -f "$tmp/$cfg.count" ] && cnt=$(tail -1 "$tmp/$cfg.count" | awk '{ print $2 " / " $1 }')
    awk -v c="$cfg" -v m="$m" -v b="$base" -v s="$sum" -v n="$cnt" \
        'BEGIN { printf "| %s | %.2f | %.2f | %s | %s |\n", c, m, m / b, s, n }'
done
