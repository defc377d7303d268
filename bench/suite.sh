#!/bin/sh
# suite.sh -- the benchmark suite: in one run, OSU-style latency tables of
# collectives, blocking and nonblocking, at 4 B to 4 MiB for four
# configurations of the same plain bench/lat binary on this machine, in
# alternated rounds (each round runs the configurations in another order;
# a cell is the median of the rounds' medians):
#   mpich-shm  plain MPICH (shared memory within the node)
#   mpich-tcp  plain MPICH with UCX_TLS=self,tcp
#   acis-udp   LD_PRELOAD=libacis.so, offload on, UDP channel to the switch
#   acis-shm   LD_PRELOAD=libacis.so, offload on, shared-memory channel
# Every acis run has MPIR_CVAR_OFFLOAD_STATS=1; the statistics table rank 0
# prints at MPI_Finalize tells whether the measured calls were offloaded.
# A run whose calls went (partly) to MPICH shows "fallback" ("partial")
# instead of a latency, so a fallback never passes for an offload result.
#
# Writes Markdown tables to stdout, progress to stderr, and results.md,
# results.csv, runs.log and latency.png (with gnuplot) to the out directory.
# Run `bench/suite.sh --help` for the options.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
MPIEXEC=${MPIEXEC:-mpiexec.mpich}
blocking="allreduce reduce bcast barrier allgather gather scatter reduce_scatter scan exscan"
all_colls="$blocking $(for c in $blocking; do printf 'i%s ' "$c"; done)"
all_configs="mpich-shm mpich-tcp acis-udp acis-shm"
configs=$all_configs

usage() {
    cat <<EOF
usage: bench/suite.sh [options]
  --np N           ranks (default 2)
  --build DIR      build directory with bench/lat and .libs/libacis.so
                   (default: build/ in the source tree)
  --colls LIST     comma-separated collectives, or all (default
                   allreduce,reduce,bcast,barrier,allgather,gather); allowed:
                   $(echo "$all_colls" | tr ' ' ,)
                   (an i in front: the nonblocking form and its wait)
  --configs LIST   comma-separated configurations (default all four):
                   $(echo "$all_configs" | tr ' ' ,)
  --rounds N       alternated rounds, 1..20 (default 3; 1 with --quick)
  --sizes LIST     comma-separated message sizes in bytes, 1..268435456
  --max BYTES      sizes 4, 16, 64, ... up to BYTES (default 4194304)
  --out DIR        output directory (default bench/results/DATE-npN/)
  --quick          a tenth of the iterations, 3 repetitions (to check a setup)
  --write          every rank writes its send buffer before each call, as an
                   application computes its data, and only the calls are
                   timed (bench/lat -w); without it the buffers are written
                   once, as OSU does
  --timeout SEC    stop any one mpiexec run after SEC seconds (default 120)
Each repetition is capped at 0.2 s (0.05 s with --quick; bench/lat -b).
  -h, --help       this text
Environment: MPIEXEC (default mpiexec.mpich).
EOF
}

die() {
    echo "bench/suite.sh: $*" >&2
    echo "bench/suite.sh: see bench/suite.sh --help" >&2
    exit 2
}

is_count() {   # is_count VALUE: a decimal integer >= 1 without leading zeros
    case $1 in
    '' | 0* | *[!0-9]*) return 1 ;;
    esac
    [ ${#1} -le 10 ]
}

# The command as typed, quoted where needed, for the header.
command_line=bench/suite.sh
for a in "$@"; do
    case $a in
    *[!A-Za-z0-9_./,=:-]* | '') command_line="$command_line '$a'" ;;
    *) command_line="$command_line $a" ;;
    esac
done

np=2
build=
colls=allreduce,reduce,bcast,barrier,allgather,gather
sizes=
max=
out=
quick=0
write=
rounds=
run_timeout=120
while [ $# -gt 0 ]; do
    opt=$1
    case $opt in
    --*=*) val=${opt#*=}; opt=${opt%%=*}; shift; set -- "$opt" "$val" "$@" ;;
    esac
    case $opt in
    -h | --help) usage; exit 0 ;;
    --quick) quick=1; shift; continue ;;
    --write) write=-w; shift; continue ;;
    --np | --build | --colls | --configs | --rounds | --sizes | --max | --out | --timeout)
        [ $# -ge 2 ] || die "$opt needs a value"
        val=$2
        shift 2 ;;
    *) die "unknown option '$opt' (allowed: --np --build --colls --configs --rounds --sizes --max --out --quick --write --timeout --help)" ;;
    esac
    case $opt in
    --np)
        is_count "$val" && [ "$val" -le 4096 ] ||
            die "--np: '$val' is not a rank count (an integer from 1 to 4096)"
        np=$val ;;
    --build) build=$val ;;
    --colls)
        [ "$val" = all ] && val=$(echo $all_colls | tr ' ' ,)
        [ -n "$val" ] || die "--colls: empty list (allowed: $(echo "$all_colls" | tr ' ' ,))"
        for c in $(echo "$val" | tr , ' '); do
            case " $all_colls " in
            *" $c "*) ;;
            *) die "--colls: unknown collective '$c' (allowed: $(echo "$all_colls" | tr ' ' ,))" ;;
            esac
        done
        colls=$val ;;
    --configs)
        [ -n "$val" ] || die "--configs: empty list (allowed: $(echo "$all_configs" | tr ' ' ,))"
        for c in $(echo "$val" | tr , ' '); do
            case " $all_configs " in
            *" $c "*) ;;
            *) die "--configs: unknown configuration '$c' (allowed: $(echo "$all_configs" | tr ' ' ,))" ;;
            esac
        done
        configs=$(echo "$val" | tr , ' ') ;;
    --rounds)
        is_count "$val" && [ "$val" -le 20 ] ||
            die "--rounds: '$val' is not a number of rounds (an integer from 1 to 20)"
        rounds=$val ;;
    --sizes)
        [ -n "$val" ] || die "--sizes: empty list (comma-separated byte counts, 1..268435456)"
        for s in $(echo "$val" | tr , ' '); do
            is_count "$s" && [ "$s" -le 268435456 ] ||
                die "--sizes: '$s' is not a message size (an integer from 1 to 268435456)"
        done
        sizes=$val ;;
    --max)
        is_count "$val" && [ "$val" -ge 4 ] && [ "$val" -le 268435456 ] ||
            die "--max: '$val' is not a size (an integer from 4 to 268435456)"
        max=$val ;;
    --out)
        [ -n "$val" ] || die "--out: empty directory name"
        out=$val ;;
    --timeout)
        is_count "$val" && [ "$val" -le 86400 ] ||
            die "--timeout: '$val' is not a number of seconds (1 to 86400)"
        run_timeout=$val ;;
    esac
done
[ -n "$sizes" ] && [ -n "$max" ] && die "--sizes and --max exclude each other"
if [ -z "$sizes" ]; then
    s=4 sizes=4
    while [ $((s * 4)) -le "${max:-4194304}" ]; do
        s=$((s * 4))
        sizes="$sizes,$s"
    done
fi
colls=$(echo "$colls" | tr , ' ')
sizes=$(echo "$sizes" | tr , ' ')

build_arg=${build:-$top/build}
build=$(cd "$build_arg" 2>/dev/null && pwd) ||
    die "--build: no such directory '$build_arg' (run scripts/build first)"
lat=$build/bench/lat
lib=$build/.libs/libacis.so
[ -x "$lat" ] || { echo "bench/suite.sh: no $lat: build first (scripts/build)" >&2; exit 1; }
[ -f "$lib" ] || { echo "bench/suite.sh: no $lib: build first (scripts/build)" >&2; exit 1; }
command -v "$MPIEXEC" >/dev/null 2>&1 ||
    { echo "bench/suite.sh: $MPIEXEC not found (Debian: apt-get install mpich)" >&2; exit 1; }
command -v timeout >/dev/null 2>&1 ||
    { echo "bench/suite.sh: timeout(1) not found (Debian: coreutils)" >&2; exit 1; }

day=$(date -u +%Y-%m-%d)
out=${out:-$top/bench/results/$day-np$np}
mkdir -p "$out" || { echo "bench/suite.sh: cannot create $out" >&2; exit 1; }
out=$(cd "$out" && pwd)
csv=$out/results.csv
md=$out/results.md
log=$out/runs.log
png=$out/latency.png
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

cores=$(nproc)
reps=5
cut=1      # iterations are divided by this
budget=0.2 # seconds at most per repetition (bench/lat -b), so a loaded machine cannot stall the run
[ "$quick" = 1 ] && reps=3 cut=10 budget=0.05
[ -n "$rounds" ] || { [ "$quick" = 1 ] && rounds=1 || rounds=3; }
oversubscribed=0
if [ "$np" -gt "$cores" ]; then
    # MPICH busy-polls: with more ranks than cores each call waits for the
    # scheduler and a full run would take hours.
    oversubscribed=1 reps=3 cut=$((cut * 50))
fi

is_barrier() { [ "$1" = barrier ] || [ "$1" = ibarrier ]; }

iterations() {   # iterations COLL SIZE: calls per repetition, fewer for large messages
    if is_barrier "$1"; then
        n=2000
    else
        n=$((16777216 / $2))
        [ "$n" -gt 2000 ] && n=2000
        [ "$n" -lt 10 ] && n=10
    fi
    n=$((n / cut))
    [ "$n" -lt 2 ] && n=2
    echo "$n"
}

mpi_name() {     # mpi_name COLL: the row of acis's statistics table
    case $1 in
    reduce_scatter) echo MPI_Reduce_scatter_block ;;
    i*) n=$(mpi_name "${1#i}"); n=${n#MPI_}
        echo "MPI_I$(echo "$n" | cut -c1 | tr '[:upper:]' '[:lower:]')$(echo "$n" | cut -c2-)" ;;
    *) echo "MPI_$(echo "$1" | cut -c1 | tr '[:lower:]' '[:upper:]')$(echo "$1" | cut -c2-)" ;;
    esac
}

human() {        # human BYTES: 4 B, 16 KiB, 4 MiB
    awk -v b="$1" 'BEGIN {
        u = "B"; if (b >= 1048576 && b % 1048576 == 0) { b /= 1048576; u = "MiB" }
        else if (b >= 1024 && b % 1024 == 0) { b /= 1024; u = "KiB" }
        printf "%d %s", b, u }'
}

mpich_version=$(mpichversion 2>/dev/null | awk '
    /^MPICH Version:/ { v = $3 }
    /^MPICH Device:/ { d = $3 }
    END { if (v != "") printf "%s%s", v, (d != "" ? " (" d ")" : ""); else printf "unknown" }')
tree=$(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo unknown)
[ "$tree" != unknown ] && [ -n "$(git -C "$top" status --porcelain -- src include bench 2>/dev/null)" ] &&
    tree="$tree + local changes"

load=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo unknown)

nrows=0
for c in $colls; do
    if is_barrier "$c"; then nrows=$((nrows + 1)); else nrows=$((nrows + $(echo "$sizes" | wc -w))); fi
done
total=$((nrows * $(echo $configs | wc -w) * rounds))

{
    echo "# acis benchmark suite, $(date -u '+%Y-%m-%d %H:%M UTC'), $(hostname), nproc $cores, load $load, MPICH $mpich_version, $np ranks, acis $tree"
    echo "# command: $command_line"
    echo "# each cell: the median of $rounds alternated rounds, each bench/lat's median of $reps repetitions (slowest rank), us per call; repetitions capped at $budget s; calls per repetition and every round's figure in $log and rounds.csv"
    [ "$quick" = 1 ] && echo "# --quick: a tenth of the iterations; figures are rough"
    [ -n "$write" ] && echo "# --write: every rank writes its send buffer before each call (bench/lat -w); the calls alone are timed"
    awk -v l="$load" -v c="$cores" 'BEGIN { exit !(l + 0 >= c) }' &&
        echo "# load average $load on $cores cores at the start: other work shares this machine; figures are not comparable with a quiet run"
    [ "$oversubscribed" = 1 ] &&
        echo "# $np ranks on $cores cores: MPICH busy-polls and crawls when ranks outnumber cores, so iterations are cut to 1/50 (3 repetitions)"
    echo "# acis cells say fallback (none offloaded) or partial (some) where MPICH ran the calls; ratios are acis / MPICH, below 1 is acis faster"
} | tee "$md"
{
    echo "# $(head -1 "$md" | cut -c3-)"
    echo "# command: $command_line"
} >"$log"
echo "collective,bytes,config,median_us,min_us,offloaded" >"$csv"
rcsv=$out/rounds.csv
echo "collective,bytes,config,round,median_us,min_us,offloaded,cell" >"$rcsv"
[ "$oversubscribed" = 1 ] &&
    echo "bench/suite.sh: $np ranks on $cores cores: iterations cut to 1/50; MPICH crawls oversubscribed" >&2

start=$(date +%s)
done_runs=0
progress() {     # progress COLL SIZE CONFIG
    done_runs=$((done_runs + 1))
    elapsed=$(($(date +%s) - start))
    status=$(printf '[%d/%d] %s %s %s (%dm%02ds)' "$done_runs" "$total" "$1" "$2" "$3" \
        $((elapsed / 60)) $((elapsed % 60)))
    if [ -t 2 ]; then printf '\r%s\033[K' "$status" >&2; else echo "$status" >&2; fi
}

# run_one CONFIG COLL SIZE ITERS ROUND: one mpiexec of bench/lat; appends
# "median,min,offloaded,cell" to $tmp/got-CONFIG and a row to rounds.csv.
run_one() {
    config=$1 coll=$2 size=$3 iters=$4 round=$5
    case $config in
    mpich-shm) set -- ;;
    mpich-tcp) set -- UCX_TLS=self,tcp ;;
    acis-udp) set -- LD_PRELOAD="$lib" MPIR_CVAR_OFFLOAD=on MPIR_CVAR_OFFLOAD_DEVICE=udp MPIR_CVAR_OFFLOAD_STATS=1 ;;
    acis-shm) set -- LD_PRELOAD="$lib" MPIR_CVAR_OFFLOAD=on MPIR_CVAR_OFFLOAD_DEVICE=shm MPIR_CVAR_OFFLOAD_STATS=1 ;;
    esac
    warm=$((iters / 10 + 1))
    {
        echo
        echo "== $coll $size B $config, round $round, at most $iters calls per repetition (bench/lat's 4th field: used)"
        echo "\$ env -u LD_PRELOAD -u UCX_TLS $* $MPIEXEC -n $np $lat -t $coll -s $size -i $iters -x $warm -r $reps -b $budget $write"
    } >>"$log"
    rc=0
    timeout -k 10 "$run_timeout" env -u LD_PRELOAD -u UCX_TLS "$@" \
        "$MPIEXEC" -n "$np" "$lat" -t "$coll" -s "$size" -i "$iters" -x "$warm" -r "$reps" -b "$budget" $write \
        >"$tmp/stdout" 2>"$tmp/stderr" </dev/null || rc=$?
    cat "$tmp/stdout" "$tmp/stderr" >>"$log"
    med='' min=''
    if [ "$rc" = 0 ]; then
        read -r _ med min _ <"$tmp/stdout" || true
    fi
    offloaded=-
    case $config in
    acis-*)
        # "acis: MPI_Allreduce  calls offloaded software  bytes unit  reasons"
        row=$(awk -v n="$(mpi_name "$coll")" '$1 == "acis:" && $2 == n' "$tmp/stderr")
        if [ -z "$row" ]; then
            offloaded=no-stats
        else
            set -- $row
            if [ "$5" = 0 ]; then offloaded=yes
            elif [ "$4" = 0 ]; then offloaded=no
            else offloaded=partial
            fi
            if [ "$offloaded" != yes ]; then
                why=$(echo "$row" | awk '{ s = ""; for (i = 8; i <= NF; i += 2) s = s (s ? ", " : "") $i; print s }')
                echo "$config|$why|$(grep -m1 '^acis\[0\]: collectives run in MPICH' "$tmp/stderr" | sed 's/^acis\[0\]: //')" >>"$tmp/notes-$coll"
            fi
        fi ;;
    esac
    if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
        echo "(stopped after $run_timeout s)" >>"$log"
        cell=timeout
    elif [ -z "$med" ]; then
        echo "(failed, exit status $rc)" >>"$log"
        cell=failed
    else
        case $offloaded in
        - | yes) cell=$(printf '%.2f' "$med") ;;
        no) cell=fallback ;;
        *) cell=$offloaded ;;
        esac
    fi
    label=$size
    is_barrier "$coll" && label=0
    echo "$coll,$label,$config,$round,$med,$min,$offloaded,$cell" >>"$rcsv"
    echo "$med,$min,$offloaded,$cell" >>"$tmp/got-$config"
}

# settle CONFIG COLL LABEL: the rounds of CONFIG (in $tmp/got-CONFIG) as
# one cell: the median of the rounds' medians, or the first word a round
# gave instead of a figure (timeout, failed, fallback, partial); appends
# the CSV row and leaves the cell in $tmp/cell.
settle() {
    if [ ! -s "$tmp/got-$1" ]; then
        echo - >"$tmp/cell"
        return
    fi
    awk -F, -v c="$2" -v l="$3" -v cfg="$1" -v csv="$csv" '
        { n++; if ($4 !~ /^[0-9.]+$/ && word == "") word = $4
          if ($1 != "") { m[++k] = $1; if (lo == "" || $2 + 0 < lo + 0) lo = $2 }
          off = (n == 1 || off == $3) ? $3 : "partial" }
        END {
            for (i = 1; i <= k; i++)          # insertion sort of the medians
                for (j = i; j > 1 && m[j] + 0 < m[j - 1] + 0; j--) { t = m[j]; m[j] = m[j - 1]; m[j - 1] = t }
            med = k ? (k % 2 ? m[(k + 1) / 2] : (m[k / 2] + m[k / 2 + 1]) / 2) : ""
            printf "%s,%s,%s,%s,%s,%s\n", c, l, cfg, med, lo, off >> csv
            if (word != "") print word; else printf "%.2f\n", med
        }' "$tmp/got-$1" >"$tmp/cell"
    rm -f "$tmp/got-$1"
}

# rotate N WORDS...: the words, starting at the N-th (0-based), wrapped.
rotate() {
    k=$1
    shift
    n=$#
    i=0
    while [ "$i" -lt "$n" ]; do
        j=$(((i + k) % n + 1))
        eval "printf '%s ' \"\${$j}\""
        i=$((i + 1))
    done
}

ratio() {        # ratio ACIS_CELL MPICH_CELL
    awk -v a="$1" -v m="$2" 'BEGIN {
        if (a ~ /^[0-9.]+$/ && m ~ /^[0-9.]+$/ && m + 0 > 0) printf "%.2f", a / m; else printf "-" }'
}

for coll in $colls; do
    rows=$sizes
    is_barrier "$coll" && rows=0
    {
        echo
        echo "### $coll"
        echo
        echo "| bytes | mpich-shm | mpich-tcp | acis-udp | acis-shm | udp/tcp | shm/shm |"
        echo "|---:|---:|---:|---:|---:|---:|---:|"
    } >"$tmp/table"
    for size in $rows; do
        if is_barrier "$coll"; then run_size=4 label=-; else run_size=$size label=$size; fi
        iters=$(iterations "$coll" "$run_size")
        line="| $label"
        round=1
        while [ "$round" -le "$rounds" ]; do
            for config in $(rotate $((round - 1)) $configs); do
                if is_barrier "$coll"; then progress "$coll" - "$config"
                else progress "$coll" "$(human "$size")" "$config"; fi
                run_one "$config" "$coll" "$run_size" "$iters" "$round"
            done
            round=$((round + 1))
        done
        csv_label=$size
        is_barrier "$coll" && csv_label=0
        for config in $all_configs; do
            settle "$config" "$coll" "$csv_label"
            cell=$(cat "$tmp/cell")
            eval "cell_$(echo "$config" | tr - _)=\$cell"
            line="$line | $cell"
        done
        line="$line | $(ratio "$cell_acis_udp" "$cell_mpich_tcp") | $(ratio "$cell_acis_shm" "$cell_mpich_shm") |"
        echo "$line" >>"$tmp/table"
    done
    if [ -s "$tmp/notes-$coll" ]; then
        echo >>"$tmp/table"
        sort "$tmp/notes-$coll" | uniq -c | while read -r n rest; do
            config=${rest%%|*} rest=${rest#*|}
            why=${rest%%|*} msg=${rest#*|}
            echo "Not offloaded: $config in $n run(s); MPICH ran the calls (${why:-no reason counted})${msg:+: $msg}."
        done >>"$tmp/table"
    fi
    [ -t 2 ] && printf '\r\033[K' >&2
    tee -a "$md" <"$tmp/table"
done
elapsed=$(($(date +%s) - start))
echo >>"$md"
echo "(run took $((elapsed / 60)) min $((elapsed % 60)) s)" | tee -a "$md"

# ------------------------------------------------------------------ plot ---
if ! awk -F, 'NR > 1 && $4 != "" { found = 1 } END { exit !found }' "$csv"; then
    echo "bench/suite.sh: every run failed; see $log" >&2
    exit 1
fi
if ! command -v gnuplot >/dev/null 2>&1; then
    echo "bench/suite.sh: gnuplot not found, no plot (Debian: apt-get install gnuplot-nox); CSV: $csv" >&2
    echo "wrote $md, $csv, $log"
    exit 0
fi
terminal=png
gnuplot -e 'set terminal pngcairo' >/dev/null 2>&1 && terminal=pngcairo
n=$(echo $colls | wc -w)
if [ "$n" -le 1 ]; then across=1; elif [ "$n" -le 4 ]; then across=2; else across=3; fi
down=$(((n + across - 1) / across))
width=$((640 * across))
[ "$width" -lt 960 ] && width=960
{
    echo "set terminal $terminal size $width,$((480 * down)) font ',10'"
    echo "set output '$png'"
    echo "set datafile missing '-'"
    echo "set datafile separator ','"
    echo "set grid"
    echo "set key top left"
    echo "set multiplot layout $down,$across title \"$(head -1 "$md" | cut -c3- | sed 's/"/\\"/g')\" font ',9'"
} >"$tmp/plot.gp"
for coll in $colls; do
    # One file per collective: bytes, then a latency column per configuration,
    # empty where acis did not offload or the run failed.
    awk -F, -v c="$coll" -v cfgs="$all_configs" '
        BEGIN { n = split(cfgs, cfg, " ") }
        NR > 1 && $1 == c {
            if (!($2 in seen)) { seen[$2] = 1; order[++rows] = $2 }
            ok = $4 != "" && ($6 == "-" || $6 == "yes")
            v[$2, $3] = ok ? $4 : "-"
        }
        END {
            for (r = 1; r <= rows; r++) {
                line = order[r]
                for (i = 1; i <= n; i++) line = line "," ((order[r], cfg[i]) in v ? v[order[r], cfg[i]] : "-")
                print line
            }
        }' "$csv" >"$tmp/plot-$coll.csv"
    plots=
    i=2
    for config in $all_configs; do
        if awk -F, -v i="$i" '$i != "-" { found = 1 } END { exit !found }' "$tmp/plot-$coll.csv"; then
            if is_barrier "$coll"; then
                plots="$plots${plots:+, }'$tmp/plot-$coll.csv' using ($i - 1):$i with boxes lc $((i - 1)) title '$config'"
            else
                plots="$plots${plots:+, }'$tmp/plot-$coll.csv' using 1:$i with linespoints lc $((i - 1)) pt $((i + 3)) title '$config'"
            fi
        else
            case $config in
            acis-*) missing="$config: no offloaded result" ;;
            *) missing="$config: no result" ;;
            esac
            plots="$plots${plots:+, }NaN lc $((i - 1)) title '$missing'"
        fi
        i=$((i + 1))
    done
    {
        echo "set title '$coll, $np ranks'"
        echo "set ylabel 'latency (us)'"
        if is_barrier "$coll"; then
            echo "unset logscale; set logscale y; set xrange [0.3:4.7]; set xtics ('mpich-shm' 1, 'mpich-tcp' 2, 'acis-udp' 3, 'acis-shm' 4)"
            echo "set xlabel ''; set style fill solid 0.6; set boxwidth 0.6; set yrange [*:*]"
        else
            printf "unset logscale; set logscale xy 2; set xrange [%s]; set yrange [*:*]; set xlabel 'bytes'; set xtics (" \
                "$(echo "$sizes" | tr ' ' '\n' | sort -n | awk 'NR == 1 { lo = $1 } { hi = $1 } END { print lo / 1.5 ":" hi * 1.5 }')"
            sep=
            for s in $sizes; do printf "%s'%s' %s" "$sep" "$(human "$s" | sed 's/ B$//; s/ \(.\).*/\1/')" "$s"; sep=", "; done
            echo ")"
            echo "set logscale y 10; set format y '%g'"
        fi
        echo "plot $plots"
    } >>"$tmp/plot.gp"
done
echo "unset multiplot" >>"$tmp/plot.gp"
if gnuplot "$tmp/plot.gp" >>"$log" 2>&1; then
    echo "wrote $md, $csv, $log, $png"
else
    echo "bench/suite.sh: gnuplot failed (see $log); CSV: $csv" >&2
    echo "wrote $md, $csv, $log"
fi
