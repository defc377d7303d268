#!/bin/sh
# scalapack.sh -- a real linear-algebra code with and without acis, in one
# run: Debian's ScaLAPACK drivers (package scalapack-mpi-test: LU,
# Cholesky and QR factorizations of an N x N matrix, block size NB, eight
# times per job, on a P x Q process grid) on plain MPICH and through acis
# on each channel, alternated REPS times.  Prints per driver and
# configuration the median of the job's summed factorization times (as
# the driver reports them, 10 ms resolution), the median time of the
# whole job (start-up and MPI_Finalize included), their ratios to MPICH,
# whether every residual check PASSED, and the calls acis offloaded (a
# silent fallback cannot pass for offload).
#
# usage: [CONFIGS="..."] bench/scalapack.sh [BUILD_DIR] [GRID] [N] [NB] [REPS] [DRIVERS]
#   defaults: build, grid 2x1 (P x Q ranks; a number NP means 1 x NP),
#   N 600 (the drivers' work space holds about that much), NB 32, 5
#   repetitions, "lu llt qr"; CONFIGS default "mpich acis-shm acis-udp".
set -eu
build=$(cd "${1:-build}" && pwd)
grid=${2:-2x1}
case $grid in
*x*) p=${grid%x*} q=${grid#*x} ;;
*)   p=1 q=$grid ;;
esac
np=$((p * q))
n=${3:-600}
nb=${4:-32}
reps=${5:-5}
drivers=${6:-lu llt qr}
configs=${CONFIGS:-mpich acis-shm acis-udp}
MPIEXEC=${MPIEXEC:-mpiexec.mpich}
dir=${ACIS_SCALAPACK_TESTS:-/usr/lib/x86_64-linux-gnu/scalapack/mpich-tests}
lib="$build/.libs/libacis.so"
[ -f "$lib" ] || { echo "no $lib: build first (scripts/build)" >&2; exit 1; }
[ -x "$dir/xdlu" ] || { echo "no $dir/xdlu: install scalapack-mpi-test" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The input file of driver $1: the problem k times over (the drivers take
# at most 10 sizes), on the p x q grid.
k=8
ns=$(for i in $(seq $k); do printf '%s ' "$n"; done)
dat() {
    case $1 in
    lu)  printf "'LU'\n'acis'\n'LU.out'\n6\n%s\n%s\n%s\n1\n%s\n1\n1\n1\n1\n1\n%s\n%s\n1.0\nF\n" \
             "$k" "$ns" "$ns" "$nb" "$p" "$q" >"$tmp/LU.dat" ;;
    llt) printf "'LLT'\n'acis'\n'LLT.out'\n6\n'U'\n%s\n%s\n1\n%s\n1\n1\n1\n1\n1\n%s\n%s\n3.0\nF\n" \
             "$k" "$ns" "$nb" "$p" "$q" >"$tmp/LLT.dat" ;;
    qr)  printf "'QR'\n'acis'\n'QR.out'\n6\n1\n'QR'\n%s\n%s\n%s\n1\n%s\n%s\n1\n%s\n%s\n5.0\n" \
             "$k" "$ns" "$ns" "$nb" "$nb" "$p" "$q" >"$tmp/QR.dat" ;;
    esac
}
# Column of the factorization time in the driver's WALL line.
col() { case $1 in qr) echo 8 ;; *) echo 9 ;; esac; }

echo "# CONFIGS=\"$configs\" bench/scalapack.sh $*: $np ranks (grid $p x $q), N $n, NB $nb," \
     "$reps repetitions, $(date -u '+%F %H:%M') UTC, $(nproc) cores, load $(cut -d' ' -f1 /proc/loadavg)"
for d in $drivers; do
    dat "$d"
    for r in $(seq "$reps"); do
        for cfg in $configs; do
            echo "[$r/$reps] $d $cfg" >&2
            set -- "$MPIEXEC" -n "$np" "$dir/xd$d"
            case $cfg in
            mpich) ;;
            acis-*) set -- env LD_PRELOAD="$lib" MPIR_CVAR_OFFLOAD=on MPIR_CVAR_OFFLOAD_STATS=1 \
                        MPIR_CVAR_OFFLOAD_DEVICE="${cfg#acis-}" "$@" ;;
            esac
            t0=$(date +%s.%N)
            (cd "$tmp" && "$@" >"$tmp/out" 2>&1) || { tail -20 "$tmp/out"; exit 1; }
            t1=$(date +%s.%N)
            [ "$(grep -c '^WALL' "$tmp/out")" = $k ] ||
                { tail -20 "$tmp/out"; echo "xd$d did not print $k results" >&2; exit 1; }
            grep '^WALL' "$tmp/out" | awk -v c="$(col "$d")" -v t0="$t0" -v t1="$t1" \
                '{ f += $c; if ($0 !~ /PASSED/) bad = 1 }
                 END { print f, t1 - t0, bad ? "FAILED" : "PASSED" }' >>"$tmp/$d.$cfg"
            grep -E '^acis: MPI_' "$tmp/out" |
                awk '{ c += $3; o += $4 } END { print o + 0 " / " c + 0 }' >"$tmp/$d.$cfg.count"
        done
    done
done

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
printf '| driver | configuration | factorization s (median) | ratio | job s (median) | ratio | checks | offloaded / calls |\n'
printf '|---|---|---:|---:|---:|---:|---|---:|\n'
for d in $drivers; do
    bf=$(awk '{ print $1 }' "$tmp/$d.mpich" | median)
    bj=$(awk '{ print $2 }' "$tmp/$d.mpich" | median)
    for cfg in $configs; do
        f=$(awk '{ print $1 }' "$tmp/$d.$cfg" | median)
        j=$(awk '{ print $2 }' "$tmp/$d.$cfg" | median)
        ok=$(awk '{ print $3 }' "$tmp/$d.$cfg" | sort -u | tr '\n' ' ')
        cnt=-
        [ "$cfg" = mpich ] || cnt=$(cat "$tmp/$d.$cfg.count")
        awk -v d="$d" -v c="$cfg" -v f="$f" -v bf="$bf" -v j="$j" -v bj="$bj" -v ok="$ok" \
            -v n="$cnt" 'BEGIN { printf "| %s | %s | %.3f | %.2f | %.3f | %.2f | %s| %s |\n",
                                 d, c, f, (bf > 0 ? f / bf : 0), j, j / bj, ok, n }'
    done
done
