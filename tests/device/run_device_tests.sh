#!/usr/bin/env bash
# `make test GPU=omp` and `make test GPU=1`: the GPU path's gradient tests, then training
# runs with --device gpu beside the same runs with --device cpu, one thread a rank, through
# the strategies' families (lossless sparse, dense, top-k with residuals selected on the
# device by exact and threshold-reuse and on the host by another selection, a parameter
# server, local SGD), every loss and lr schedule, with and without L2, and with two
# classes and three. Under Thrust's OpenMP backend each pair of models must be byte for
# byte the same; under CUDA the weights within 1e-4 of the CPU's (relative, in the L2
# norm) and the test accuracies within half a point. Where no GPU can run them (GPU=1 on a
# machine without a driver or GPU), --device gpu must end the job on every rank naming
# why, and the runs report themselves skipped with that reason. Last, checkpoints resumed
# on the other device.
source "$(dirname "$0")/../e2e/lib.bash"

"$BUILD"/device_tests >"$tmp/device.out" 2>&1 || { cat "$tmp/device.out"; fail "device_tests"; }
cat "$tmp/device.out"
backend=omp
if grep -q '^SKIPPED' "$tmp/device.out"; then backend=none; fi
if grep -q '^the GPU path on CUDA' "$tmp/device.out"; then backend=cuda; fi

"$BUILD"/gen_data --kind url --rows 3000 --features 20000 --seed 4 --out "$tmp/train.svm" 2>/dev/null
"$BUILD"/gen_data --kind url --rows 1000 --features 20000 --seed 4 --first-row 3000 --out "$tmp/test.svm" 2>/dev/null
"$BUILD"/gen_data --kind url --rows 3000 --features 20000 --classes 3 --seed 4 --out "$tmp/train3.svm" 2>/dev/null
"$BUILD"/gen_data --kind url --rows 1000 --features 20000 --classes 3 --seed 4 --first-row 3000 \
  --out "$tmp/test3.svm" 2>/dev/null

train() {  # name device ranks data test [flags]
  local name=$1 device=$2 ranks=$3 data=$4 test=$5; shift 5
  timeout "$HANG" "$RUN" -np "$ranks" "$MPISGD" train --data "$data" --test "$test" --device "$device" --threads 1 \
    --epochs 2 --save-model "$tmp/$name.$device.model" --profile "$tmp/$name.$device.csv" --no-progress "$@" \
    >"$tmp/$name.$device.out" 2>&1
}
# The last epoch's test accuracy: the per-epoch table's last column, a fraction.
accuracy() { awk '/^ *[0-9]+ +[0-9]+ /{ a = $NF } END { print a }' "$1"; }
# ||a - b|| / ||b|| over two LIBLINEAR model files' weights (the lines after `w`).
model_distance() {
  awk 'FNR == 1 { f++; on = 0 } on { for (i = 1; i <= NF; i++) w[f, ++n[f]] = $i } /^w$/ { on = 1 }
       END { if (n[1] != n[2] || n[1] == 0) { print "unequal"; exit }
             for (i = 1; i <= n[1]; i++) { d += (w[1, i] - w[2, i]) ^ 2; b += w[2, i] ^ 2 }
             printf "%.3g\n", (b > 0 ? sqrt(d / b) : sqrt(d)) }' "$1" "$2"
}

if [[ $backend == none ]]; then
  why=$(sed -n 's/^SKIPPED: the GPU path.s tests need a GPU: //p' "$tmp/device.out")
  rc=0
  train refused gpu 2 "$tmp/train.svm" "$tmp/test.svm" || rc=$?
  [[ $rc -ne 124 ]] || fail "--device gpu without a GPU: the job hung"
  [[ $rc -ne 0 ]] || fail "--device gpu without a GPU: exit code 0"
  expect_contains "$tmp/refused.gpu.out" "rank 0: $why" "--device gpu without a GPU"
  [[ ! -e $tmp/refused.gpu.model ]] || fail "--device gpu without a GPU: a model was written"
  echo "SKIPPED: training with --device gpu: $why"
  done_checks
  exit 0
fi

# name ranks data test flags...
cases=(
  "default 2 train test"
  "allreduce 2 train test --strategy allreduce"
  "topk 3 train test --strategy topk-dsa --density 0.05"
  "oktopk 2 train test --strategy oktopk --density 0.05"
  "gtopk-exact 2 train test --strategy gtopk --density 0.05 --select exact --warmup-steps 3"
  "ssar-topk 3 train test --strategy ssar-split-ag --density 0.02 --reuse-period 4 --l2 1e-4"
  "topk-gaussian 2 train test --strategy topk-dsa --density 0.05 --select gaussian"
  "ps 3 train test --strategy ps-sync --servers 1"
  "local-sgd 2 train test --strategy local-sgd --sync-every 4"
  "svm 2 train test --model svm --l2 1e-4 --lr-schedule constant"
  "linreg 1 train test --model linreg --lr-schedule adagrad --l2 1e-4"
  "softmax 2 train3 test3"
  "ovr 3 train3 test3 --multiclass ovr --lr-schedule adagrad"
)
for c in "${cases[@]}"; do
  read -r name ranks data test flags <<<"$c"
  # shellcheck disable=SC2086  # the flags split into words
  for device in cpu gpu; do
    train "$name" "$device" "$ranks" "$tmp/$data.svm" "$tmp/$test.svm" $flags ||
      { cat "$tmp/$name.$device.out"; fail "$name: training with --device $device"; }
  done
  expect_contains "$tmp/$name.gpu.out" "--device gpu, rank 0:" "$name: the device named"
  case $name in
    topk | oktopk | gtopk-exact | ssar-topk) expect_contains "$tmp/$name.gpu.out" "top-k selects on the device" \
      "$name: the selection on the device" ;;
    topk-gaussian) expect_contains "$tmp/$name.gpu.out" "top-k selects on the host" \
      "$name: a selection the device does not make, said so" ;;
  esac
  # A held model comes down every epoch (20,000 features, 4 bytes a weight and column);
  # a model the host keeps makes no trips.
  trips=$(profile_column "$tmp/$name.gpu.csv" model_trip_s_mean)
  [[ -n $trips ]] || fail "$name: the profile has no model_trip_s_mean"
  if grep -q "the model lives on the device" "$tmp/$name.gpu.out"; then
    down=$(profile_column "$tmp/$name.gpu.csv" from_device_bytes)
    awk '$1 + 0 < 80000 { exit 1 }' <<<"$down" || fail "$name: a held model did not come down each epoch: $down"
  else
    awk '$1 + 0 != 0 { exit 1 }' <<<"$trips" || fail "$name: trips timed for a model the host kept: $trips"
  fi
  if [[ $backend == omp ]]; then
    cmp -s "$tmp/$name.cpu.model" "$tmp/$name.gpu.model" ||
      fail "$name: --device gpu (OpenMP backend) wrote another model than --device cpu"
  else
    a=$(accuracy "$tmp/$name.cpu.out") b=$(accuracy "$tmp/$name.gpu.out")
    dist=$(model_distance "$tmp/$name.gpu.model" "$tmp/$name.cpu.model")
    echo "$name: test accuracy cpu $a, gpu $b; weights ||gpu - cpu|| / ||cpu|| = $dist"
    awk -v d="$dist" 'BEGIN { exit !(d != "unequal" && d + 0 <= 1e-4) }' ||
      fail "$name: --device gpu's weights are $dist away from --device cpu's (relative), above 1e-4"
    awk -v a="$a" -v b="$b" 'BEGIN { d = a - b; exit !(a != "" && b != "" && d >= -0.005 && d <= 0.005) }' ||
      fail "$name: --device gpu's test accuracy $b is not within half a point of --device cpu's $a"
  fi
  pass
done

# A checkpoint resumed on the other device goes on from the checkpoint's bits: under the
# OpenMP backend, where both devices sum alike, the resumed model is the uninterrupted
# run's byte for byte; under CUDA within 1e-4 of it.
run_epochs() {  # name device epochs [flags]
  local name=$1 device=$2 epochs=$3; shift 3
  timeout "$HANG" "$RUN" -np 2 "$MPISGD" train --data "$tmp/train.svm" --device "$device" --threads 1 \
    --epochs "$epochs" --no-early-stop --no-progress --save-model "$tmp/$name.model" "$@" >"$tmp/$name.out" 2>&1 ||
    { cat "$tmp/$name.out"; fail "$name"; }
}
for from in gpu cpu; do
  to=cpu
  [[ $from == cpu ]] && to=gpu
  run_epochs "whole.$to" "$to" 4
  run_epochs "half.$from" "$from" 2 --checkpoint "$tmp/ck.$from"
  run_epochs "resumed.$to" "$to" 4 --resume "$tmp/ck.$from"
  expect_contains "$tmp/resumed.$to.out" "resuming on another device (device: checkpoint has" \
    "a $from checkpoint resumed on the $to: the change named"
  if [[ $backend == omp ]]; then
    cmp -s "$tmp/whole.$to.model" "$tmp/resumed.$to.model" ||
      fail "a $from checkpoint resumed on the $to ended with another model than the uninterrupted run"
  else
    dist=$(model_distance "$tmp/resumed.$to.model" "$tmp/whole.$to.model")
    echo "a $from checkpoint resumed on the $to: ||resumed - whole|| / ||whole|| = $dist"
    awk -v d="$dist" 'BEGIN { exit !(d != "unequal" && d + 0 <= 1e-4) }' ||
      fail "a $from checkpoint resumed on the $to is $dist away from the uninterrupted run (relative), above 1e-4"
  fi
  pass
done
done_checks
