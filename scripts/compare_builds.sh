#!/usr/bin/env bash
# Behaviour unchanged between two builds: trains every deterministic strategy with each
# build's mpisgd on the same generated data, seed, P and flags, and compares the model
# files byte for byte and the profiles' bytes columns exactly. For refactors that must
# not change a bit.
#
#   scripts/compare_builds.sh BEFORE/mpisgd AFTER/mpisgd [--ranks "1 3 4"] [--threads 1]
#
# sparse-auto is left out: it chooses among algorithms by timings. The lossless sparse
# strategies get an explicit --dense-switch, whose default is tuned from timings too.
# The data comes from the gen_data beside AFTER.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { sed -n '2,11s/^# \{0,1\}//p' "$0" >&2; exit 2; }
[[ $# -ge 2 ]] || usage
before=$1 after=$2
shift 2
ranks="1 3 4" threads=1
while [[ $# -gt 0 ]]; do
  case $1 in
    --ranks) ranks=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    *) usage ;;
  esac
done
[[ -x $before && -x $after ]] || { echo "compare_builds.sh: $before and $after must be executables" >&2; exit 2; }
gen=$(dirname "$after")/gen_data
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$gen" --kind url --rows 6000 --features 30000 --seed 11 --out "$tmp/train.svm" >/dev/null 2>&1
"$gen" --kind url --rows 1500 --features 30000 --first-row 6000 --seed 11 --out "$tmp/test.svm" >/dev/null 2>&1

strategies=(
  "allreduce"
  "ssar-rec-dbl --dense-switch 0.05"
  "ssar-split-ag --dense-switch 0.05"
  "dsar-split-ag --dense-switch 0.05"
  "dsar-early --dense-switch 0.05"
  "topk-ag --density 0.02"
  "topk-dsa --density 0.02"
  "gtopk --density 0.02"
  "gaussiank --density 0.02"
  "oktopk --density 0.02"
  "ps-sync --servers 1"
)
# The profile's bytes columns, by name.
bytes_columns() {
  awk -F, 'NR == 1 { for (i = 1; i <= NF; ++i) if ($i ~ /^bytes_/) keep[i] = 1 }
           { line = ""; for (i = 1; i <= NF; ++i) if (i in keep) line = line $i ","; print line }' "$1"
}

same=0 differ=0
for np in $ranks; do
  for s in "${strategies[@]}"; do
    name=${s%% *}
    [[ $name == ps-sync && $np -lt 2 ]] && continue  # its server needs a rank of its own
    for build in before after; do
      bin=$before
      [[ $build == after ]] && bin=$after
      # shellcheck disable=SC2086  # the strategy's flags are words
      scripts/mpirun_local.sh -np "$np" "$bin" train --data "$tmp/train.svm" --test "$tmp/test.svm" \
        --strategy $s --threads "$threads" --epochs 3 --no-early-stop --no-progress --seed 5 \
        --save-model "$tmp/$build.model" --profile "$tmp/$build.csv" >"$tmp/$build.out" 2>&1 ||
        { cat "$tmp/$build.out"; echo "compare_builds.sh: $build failed: -np $np $s" >&2; exit 1; }
    done
    if cmp -s "$tmp/before.model" "$tmp/after.model" &&
      diff -q <(bytes_columns "$tmp/before.csv") <(bytes_columns "$tmp/after.csv") >/dev/null; then
      same=$((same + 1))
      printf '  same    -np %d T=%s %s\n' "$np" "$threads" "$s"
    else
      differ=$((differ + 1))
      printf '  DIFFER  -np %d T=%s %s\n' "$np" "$threads" "$s"
    fi
  done
done
echo "compare_builds: $same same, $differ differ"
[[ $differ -eq 0 ]]
