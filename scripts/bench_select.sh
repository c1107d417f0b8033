#!/usr/bin/env bash
# Top-k selection benchmark sweep: build/select_bench (every method of sparse/topk_select.h
# against std::sort and one read of the vector) for each value distribution, one CSV for
# the whole sweep.
#
#   scripts/bench_select.sh [--dims "3200000 16600000"] [--densities "1e-3 1e-2"]
#       [--dists "normal laplace"] [--reps 11] [--reuse-period 32] [--out out/bench] [--quick]
#       [-- EXTRA select_bench FLAGS]
#
# Defaults are the thesis' real-data sizes (URL: N = 3.2M, Webspam: N = 16.6M) at the
# issue's densities, on the dense update and on a sparse one of 10% non-zeros. Selection is
# single-threaded: run it on an otherwise idle machine. --quick: small sizes, a smoke test.
# Builds in $BUILD (default build). Writes out/bench/select-TIME.csv and the tables beside
# it (.txt).
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { sed -n '2,14s/^# \{0,1\}//p' "$0" >&2; exit 2; }
die() { echo "bench_select.sh: $*" >&2; exit 2; }

dims="3200000 16600000" densities="1e-3 1e-2" dists="normal laplace"
reps=11 period=32 out=out/bench
extra=()
while [[ $# -gt 0 ]]; do
  case $1 in
    --dims) dims=${2:?}; shift 2 ;;
    --densities) densities=${2:?}; shift 2 ;;
    --dists) dists=${2:?}; shift 2 ;;
    --reps) reps=${2:?}; shift 2 ;;
    --reuse-period) period=${2:?}; shift 2 ;;
    --out) out=${2:?}; shift 2 ;;
    --quick) dims="100000" reps=3 period=8; shift ;;
    -h|--help) usage ;;
    --) shift; extra=("$@"); break ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done

build=${BUILD:-build}
make -s BUILD="$build" "$build/select_bench" >&2
mkdir -p "$out"
stamp=$(date +%Y%m%d-%H%M%S)
csv="$out/select-$stamp.csv"
log="$out/select-$stamp.txt"
echo "bench_select.sh: dims [$dims] densities [$densities] dists [$dists] reps $reps reuse period $period" \
  | tee "$log" >&2

failed=0
for dist in $dists; do
  cmd=("$build/select_bench" --dims "${dims// /,}" --densities "${densities// /,}" --dist "$dist"
       --reps "$reps" --reuse-period "$period" --csv "$csv" ${extra[@]+"${extra[@]}"})
  echo "" | tee -a "$log"
  echo "\$ ${cmd[*]}" | tee -a "$log"
  if ! "${cmd[@]}" 2>&1 | tee -a "$log"; then
    echo "bench_select.sh: FAILED: dist=$dist (see $log)" | tee -a "$log" >&2
    failed=1
  fi
done
echo "bench_select.sh: results in $csv, tables in $log" >&2
exit "$failed"
