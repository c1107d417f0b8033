#!/usr/bin/env bash
# `make demo`: a small URL-like dataset, 4 ranks of logistic regression trained twice,
# over dense allreduce and over the sparse allreduce that picks its algorithm, each with
# its per-epoch table and profile, and one plot comparing them against training time. The
# step (batch, learning rate, schedule) is the default one the trainer derives from the data.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p data out
ROWS=${DEMO_ROWS:-50000}
if [[ ! -f data/demo_train.svm ]]; then
  build/gen_data --kind url --rows "$ROWS" --seed 1 --out data/demo_train.svm
  build/gen_data --kind url --rows $((ROWS / 4)) --first-row "$ROWS" --seed 1 --out data/demo_test.svm
fi
set -x
for strategy in allreduce sparse-auto; do
  scripts/mpirun_local.sh -np 4 build/mpisgd train --data data/demo_train.svm --test data/demo_test.svm \
    --model logreg --strategy "$strategy" --epochs 3 \
    --profile "out/demo_$strategy.csv" --save-model "out/demo_$strategy.model"
done
scripts/plot_profile.py out/demo_allreduce.csv out/demo_sparse-auto.csv --x time -o out/demo_profile.png
