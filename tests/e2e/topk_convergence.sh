#!/usr/bin/env bash
# Top-k with error feedback trains as well as the dense allreduce (issue 16): logreg on
# URL-like data at --density 0.01, P = 4, reaches a test accuracy within 1 point of
# `allreduce` after the same epochs, for every top-k strategy and for a lossless one on
# its top k; the model saved is the same on every rank (mpisgd checks the hash).
source "$(dirname "$0")/lib.bash"

"$BUILD"/gen_data --kind url --rows 20000 --features 100000 --seed 3 --out "$tmp/train.svm" 2>/dev/null
"$BUILD"/gen_data --kind url --rows 5000 --features 100000 --first-row 20000 --seed 3 --out "$tmp/test.svm" 2>/dev/null

accuracy() {  # strategy [flags]: the test accuracy after the last epoch
  local name=$1
  "$RUN" -np 4 "$MPISGD" train --data "$tmp/train.svm" --test "$tmp/test.svm" --epochs 3 --batch 250 --lr 2 \
    --lr-schedule invscaling --no-progress --profile "$tmp/$name.csv" --strategy "$@" >"$tmp/$name.out" 2>&1 ||
    { cat "$tmp/$name.out"; fail "$*: training failed"; }
  expect_contains "$tmp/$name.out" "identical on all 4 ranks" "$name: one model"
  tail -n 1 "$tmp/$name.csv" | awk -F, '{print $NF}'
}

base=$(accuracy allreduce)
echo "allreduce: test accuracy $base"
for s in topk-ag topk-dsa gtopk gaussiank oktopk "ssar-split-ag"; do
  acc=$(accuracy $s --density 0.01)
  echo "$s --density 0.01: test accuracy $acc"
  awk -v a="$acc" -v b="$base" 'BEGIN { exit !(a >= b - 0.01) }' || fail "$s: accuracy $acc is more than 1 point below allreduce's $base"
  pass
done
done_checks
