#!/usr/bin/env bash
# Files over 2 GiB and over 4 GiB (past signed and unsigned 32-bit offsets and MPI's int
# counts) read correctly at P = 1 and 3, as text and as their binary cache. Each file is
# a generated block repeated K times, so what must come out is known: K times the block's
# rows, and K times the rows a fixed model classifies correctly (`mpisgd predict`: a
# checksum over every label, index and value read). Takes minutes, and up to 8 GB of disk
# (the 4.4 GB file and its cache) under LARGE_DIR (default out/large), removed on exit.
# Run by `make test-large`.
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
RUN=scripts/mpirun_local.sh
dir=${LARGE_DIR:-out/large}/run.$$
mkdir -p "$dir"
trap 'rm -rf "$dir"' EXIT
checks=0
fail() { echo "FAILED: $*" >&2; exit 1; }

# "correct/rows" of a model on a file, from predict's LIBLINEAR-style accuracy line.
score() {  # ranks data
  local out
  out=$("$RUN" -np "$1" "$BUILD/mpisgd" predict --model "$dir/block.model" --data "$2" 2>&1) ||
    { echo "$out" >&2; fail "predict -np $1 on $2"; }
  grep -oE '\([0-9]+/[0-9]+\)' <<<"$out" | tr -d '()'
}

start=$SECONDS
# ~115 entries and ~1.1 kB a row: 100,000 rows make a block of about 110 MB.
"$BUILD/gen_data" --kind url --rows 100000 --seed 7 --out "$dir/block.svm" >/dev/null 2>&1
"$RUN" -np 1 "$BUILD/mpisgd" train --data "$dir/block.svm" --epochs 1 --no-progress \
  --save-model "$dir/block.model" >/dev/null 2>&1 || fail "training the block's model"
block_bytes=$(stat -c %s "$dir/block.svm")
IFS=/ read -r block_correct block_rows <<<"$(score 1 "$dir/block.svm")"
echo "block: $block_bytes bytes, $block_rows rows, $block_correct classified correctly ($((SECONDS - start)) s)"

for limit in $((2 << 30)) $((4 << 30)); do
  copies=$((limit / block_bytes + 1))
  big="$dir/big.svm"
  for ((i = 0; i < copies; i++)); do cat "$dir/block.svm"; done >"$big"
  want="$((copies * block_correct))/$((copies * block_rows))"
  echo "$(stat -c %s "$big") bytes ($copies blocks, over $((limit >> 30)) GiB): expect $want"
  for np in 1 3; do
    t=$SECONDS
    got=$(score "$np" "$big")
    [[ $got == "$want" ]] || fail "text at P = $np: $got, expected $want"
    checks=$((checks + 1))
    echo "  text  P = $np: $got ($((SECONDS - t)) s)"
  done
  t=$SECONDS
  "$RUN" -np 3 "$BUILD/mpisgd" convert --data "$big" --out "$dir/big.cache" >/dev/null 2>&1 || fail "convert at P = 3"
  rm "$big"
  echo "  cache written at P = 3: $(stat -c %s "$dir/big.cache") bytes ($((SECONDS - t)) s)"
  for np in 1 3; do
    t=$SECONDS
    got=$(score "$np" "$dir/big.cache")
    [[ $got == "$want" ]] || fail "cache at P = $np: $got, expected $want"
    checks=$((checks + 1))
    echo "  cache P = $np: $got ($((SECONDS - t)) s)"
  done
  rm "$dir/big.cache"
done
echo "$checks checks passed in $((SECONDS - start)) s"
