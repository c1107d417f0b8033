#!/usr/bin/env bash
# `make demo`: a small URL-like dataset, 4 ranks of logistic regression over dense
# allreduce, the per-epoch profile table, the profile CSV and its plot.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p data out
ROWS=${DEMO_ROWS:-50000}
if [[ ! -f data/demo_train.svm ]]; then
  build/gen_data --kind url --rows "$ROWS" --seed 1 --out data/demo_train.svm
  build/gen_data --kind url --rows $((ROWS / 4)) --first-row "$ROWS" --seed 1 --out data/demo_test.svm
fi
set -x
scripts/mpirun_local.sh -np 4 build/mpisgd train --data data/demo_train.svm --test data/demo_test.svm \
  --model logreg --strategy allreduce --epochs 5 --batch 250 --lr 5 --lr-schedule invscaling \
  --profile out/demo_profile.csv --save-model out/demo.model
scripts/plot_profile.py out/demo_profile.csv -o out/demo_profile.png
