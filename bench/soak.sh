#!/bin/sh
# soak.sh -- the long soak: random collectives through acis under injected
# faults, each compared with plain MPICH (test/mpi/soak), in rounds of
# fresh seeds; prints one line per round and stops at the first failure.
#
# usage: bench/soak.sh [BUILD_DIR] [NP] [COLLECTIVES_PER_ROUND] [ROUNDS]
#   FAULTS (environment) default "DROP=0.01"; e.g. "DROP=0.01 DUP=0.01 REORDER=0.01"
#   MAX_BYTES (environment) default 65536
set -eu
build=$(cd "${1:-build}" && pwd)
np=${2:-2}
per=${3:-1000000}
rounds=${4:-1}
MPIEXEC=${MPIEXEC:-mpiexec.mpich}
soak="$build/test/mpi/soak"
[ -x "$soak" ] || { echo "build the tests first (make -C $build check TESTS=)" >&2; exit 1; }
faults=
for f in ${FAULTS:-DROP=0.01}; do
    faults="$faults MPIR_CVAR_OFFLOAD_FAULT_$f"
done
echo "# soak: $np ranks, $rounds x $per collectives, faults:${faults:- none}," \
     "max ${MAX_BYTES:-65536} bytes, $(date -u +%Y-%m-%dT%H:%MZ)"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
r=1
while [ "$r" -le "$rounds" ]; do
    seed=$(( $(date +%s) % 100000 + r ))
    # progress lines appear as they come; the exit status goes through $out
    { rc=0
      env MPIR_CVAR_OFFLOAD=on $faults MPIR_CVAR_OFFLOAD_FAULT_SEED=$seed \
          "$MPIEXEC" -n "$np" "$soak" --count="$per" --seed="$seed" \
          --max-bytes="${MAX_BYTES:-65536}" --report-every=$((per / 10 > 0 ? per / 10 : 1)) \
          2>&1 || rc=$?
      echo $rc >"$out"; } | sed -u "s/^/round $r seed $seed: /"
    rc=$(cat "$out")
    [ "$rc" = 0 ] || { echo "round $r failed (exit $rc)"; exit 1; }
    r=$((r + 1))
done
