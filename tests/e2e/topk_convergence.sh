#!/usr/bin/env bash
# Top-k with error feedback trains as well as the dense allreduce (issue 16): logreg on
# URL-like data at --density 0.01 reaches a test accuracy within 1 point of `allreduce`
# after the same epochs, for every top-k strategy and for a lossless one on its top k,
# with two classes and five at P = 4, and three and ten classes (softmax) at every P from
# 1 to 5: the K-class updates select, and cross, whole features (k of the K N
# weights); the model saved is the same on every rank (mpisgd checks the hash).
source "$(dirname "$0")/lib.bash"

for k in 2 3 5 10; do
  "$BUILD"/gen_data --kind url --classes $k --rows 20000 --features 100000 --seed 3 --out "$tmp/train$k.svm" 2>/dev/null
  "$BUILD"/gen_data --kind url --classes $k --rows 5000 --features 100000 --first-row 20000 --seed 3 \
    --out "$tmp/test$k.svm" 2>/dev/null
done

accuracy() {  # classes ranks strategy [flags]: the test accuracy after the last epoch
  local k=$1 p=$2
  shift 2
  local name=$1-$k-$p
  "$RUN" -np "$p" "$MPISGD" train --data "$tmp/train$k.svm" --test "$tmp/test$k.svm" --epochs 3 --batch 250 --lr 2 \
    --lr-schedule invscaling --no-progress --profile "$tmp/$name.csv" --strategy "$@" >"$tmp/$name.out" 2>&1 ||
    { cat "$tmp/$name.out"; fail "$*: training failed"; }
  expect_contains "$tmp/$name.out" "identical on all $p ranks" "$name: one model"
  tail -n 1 "$tmp/$name.csv" | awk -F, '{print $NF}'
}

for run in "2 4" "5 4" "3 1" "3 2" "3 3" "3 4" "3 5" "10 1" "10 2" "10 3" "10 4" "10 5"; do
  read -r k p <<<"$run"
  base=$(accuracy "$k" "$p" allreduce)
  echo "$k classes, P = $p, allreduce: test accuracy $base"
  for s in topk-ag topk-dsa gtopk gaussiank oktopk "ssar-split-ag"; do
    acc=$(accuracy "$k" "$p" $s --density 0.01)
    echo "$k classes, P = $p, $s --density 0.01: test accuracy $acc"
    awk -v a="$acc" -v b="$base" 'BEGIN { exit !(a >= b - 0.01) }' ||
      fail "$k classes, P = $p, $s: accuracy $acc is more than 1 point below allreduce's $base"
    pass
  done
done
done_checks
