#!/usr/bin/env bash
# Top-k with error feedback trains as well as the dense allreduce (issue 16): logreg on
# URL-like data at --density 0.01, P = 4, reaches a test accuracy within 1 point of
# `allreduce` after the same epochs, for every top-k strategy and for a lossless one on
# its top k, with two classes and with five (one-vs-rest: k of the 5 N weights); the
# model saved is the same on every rank (mpisgd checks the hash).
source "$(dirname "$0")/lib.bash"

for k in 2 5; do
  "$BUILD"/gen_data --kind url --classes $k --rows 20000 --features 100000 --seed 3 --out "$tmp/train$k.svm" 2>/dev/null
  "$BUILD"/gen_data --kind url --classes $k --rows 5000 --features 100000 --first-row 20000 --seed 3 \
    --out "$tmp/test$k.svm" 2>/dev/null
done

accuracy() {  # classes strategy [flags]: the test accuracy after the last epoch
  local k=$1
  shift
  local name=$1-$k
  "$RUN" -np 4 "$MPISGD" train --data "$tmp/train$k.svm" --test "$tmp/test$k.svm" --epochs 3 --batch 250 --lr 2 \
    --lr-schedule invscaling --no-progress --profile "$tmp/$name.csv" --strategy "$@" >"$tmp/$name.out" 2>&1 ||
    { cat "$tmp/$name.out"; fail "$*: training failed"; }
  expect_contains "$tmp/$name.out" "identical on all 4 ranks" "$name: one model"
  tail -n 1 "$tmp/$name.csv" | awk -F, '{print $NF}'
}

for k in 2 5; do
  base=$(accuracy $k allreduce)
  echo "$k classes, allreduce: test accuracy $base"
  for s in topk-ag topk-dsa gtopk gaussiank oktopk "ssar-split-ag"; do
    acc=$(accuracy $k $s --density 0.01)
    echo "$k classes, $s --density 0.01: test accuracy $acc"
    awk -v a="$acc" -v b="$base" 'BEGIN { exit !(a >= b - 0.01) }' ||
      fail "$k classes, $s: accuracy $acc is more than 1 point below allreduce's $base"
    pass
  done
done
done_checks
