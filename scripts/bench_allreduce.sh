#!/usr/bin/env bash
# Sparse allreduce micro-benchmark sweep (thesis section 5.2): build/allreduce_bench over
# P ranks x dimensions x densities, every algorithm, one CSV for the whole sweep.
#
#   scripts/bench_allreduce.sh [--ranks "4 8"] [--dims "3200000 16600000"]
#       [--densities "1e-4 1e-3 1e-2 1e-1"] [--reps 5] [--warmup 1] [--dist uniform]
#       [--network none|shared|per-rank] [--rate 1gbit] [--out out/bench] [--quick]
#       [-- EXTRA allreduce_bench FLAGS]
#
# Defaults are the thesis' real-data sizes (URL: N = 3.2M, Webspam: N = 16.6M) at P = 4
# and 8 on this machine (oversubscribed through scripts/mpirun_local.sh). --network shared
# or per-rank runs every point through scripts/slow_network.sh at --rate (needs root).
# --quick: small sizes, a smoke test of the sweep. Writes out/bench/allreduce-NETWORK-TIME.csv
# (one row per algorithm and point) and the printed tables beside it (.txt).
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { sed -n '2,15s/^# \{0,1\}//p' "$0" >&2; exit 2; }
die() { echo "bench_allreduce.sh: $*" >&2; exit 2; }

ranks="4 8" dims="3200000 16600000" densities="1e-4 1e-3 1e-2 1e-1"
reps=5 warmup=1 dist=uniform network=none rate=1gbit out=out/bench
extra=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --ranks) ranks=${2:?}; shift 2 ;;
    --dims) dims=${2:?}; shift 2 ;;
    --densities) densities=${2:?}; shift 2 ;;
    --reps) reps=${2:?}; shift 2 ;;
    --warmup) warmup=${2:?}; shift 2 ;;
    --dist) dist=${2:?}; shift 2 ;;
    --network) network=${2:?}; shift 2 ;;
    --rate) rate=${2:?}; shift 2 ;;
    --out) out=${2:?}; shift 2 ;;
    --quick) ranks="2 4" dims="100000" densities="1e-3 1e-1" reps=3; shift ;;
    -h|--help) usage ;;
    --) shift; extra=("$@"); break ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done
case $network in
  none) ;;
  shared|per-rank) [[ -x scripts/slow_network.sh ]] || die "--network $network needs scripts/slow_network.sh" ;;
  *) die "--network must be none, shared or per-rank, not '$network'" ;;
esac

make -s build/allreduce_bench >&2
mkdir -p "$out"
stamp=$(date +%Y%m%d-%H%M%S)
csv="$out/allreduce-$network-$stamp.csv"
log="$out/allreduce-$network-$stamp.txt"
echo "bench_allreduce.sh: ranks [$ranks] dims [$dims] densities [$densities] reps $reps dist $dist" \
     "network $network$([[ $network != none ]] && echo " at $rate")" | tee "$log" >&2

failed=0
for p in $ranks; do
  for n in $dims; do
    for d in $densities; do
      args=(-np "$p" build/allreduce_bench --dim "$n" --density "$d" --dist "$dist" --algo all
            --reps "$reps" --warmup "$warmup" --csv "$csv" ${extra[@]+"${extra[@]}"})
      if [[ $network == none ]]; then
        cmd=(scripts/mpirun_local.sh "${args[@]}")
      else
        cmd=(scripts/slow_network.sh --mode "$network" --rate "$rate" -- "${args[@]}")
      fi
      echo "" | tee -a "$log"
      echo "\$ ${cmd[*]}" | tee -a "$log"
      # A wrong sum or a crash is reported and the sweep goes on; the exit status says so.
      if ! "${cmd[@]}" 2>&1 | tee -a "$log"; then
        echo "bench_allreduce.sh: FAILED: P=$p N=$n density=$d (see $log)" | tee -a "$log" >&2
        failed=1
      fi
    done
  done
done
echo "bench_allreduce.sh: results in $csv, tables in $log" >&2
exit "$failed"
