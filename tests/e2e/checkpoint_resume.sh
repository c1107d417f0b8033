#!/usr/bin/env bash
# Checkpoints: a run killed with SIGKILL and resumed ends with the uninterrupted run's model
# bits; a truncated or corrupted newest checkpoint is passed over for the previous one; a
# checkpoint of another run (P, data) is refused with the differences named.
source "$(dirname "$0")/lib.bash"

"$BUILD"/gen_data --kind url --rows 3000 --features 5000 --nnz 30 --seed 2 --out "$tmp/train.svm" 2>/dev/null
"$BUILD"/gen_data --kind url --rows 3000 --features 5000 --nnz 30 --seed 3 --out "$tmp/other.svm" 2>/dev/null

# Top-k with error feedback over a lossless collective and a decaying schedule: the
# residuals, the selector's reused threshold and the schedule's clock all carry over.
flags=(--strategy ssar-split-ag --density 0.05 --lr-schedule invscaling --batch 10 --seed 5 --no-early-stop --no-progress)
train() {  # np out-file [flags...]
  local np=$1 out=$2; shift 2
  timeout "$HANG" "$RUN" -np "$np" "$MPISGD" train --data "$tmp/train.svm" "${flags[@]}" "$@" >"$out" 2>&1
}

# Kill every rank with SIGKILL once a checkpoint exists, as a lost node would. How many
# epochs the run has done by then is the scheduler's choice, so the epochs compared are
# set five past them: the resumed run writes checkpoints of its own and steps on through
# the decaying schedule. No run depends on the epochs it is given beyond when it stops.
timeout "$HANG" "$RUN" -np 3 "$MPISGD" train --data "$tmp/train.svm" "${flags[@]}" --epochs 100000 \
  --checkpoint "$tmp/ck" >"$tmp/killed.out" 2>&1 &
launcher=$!
until compgen -G "$tmp/ck/epoch-*.ckpt" >/dev/null; do
  kill -0 $launcher 2>/dev/null || { cat "$tmp/killed.out"; fail "the run ended before it wrote a checkpoint"; }
  sleep 0.05
done
descendants() { local c; for c in $(ps -o pid= --ppid "$1"); do echo "$c"; descendants "$c"; done; }
ranks=$(for p in $(descendants $launcher); do [[ $(ps -o comm= -p "$p") == mpisgd ]] && echo "$p"; done || true)
[[ -n $ranks ]] || fail "the run ended before it could be killed"
kill -KILL $ranks
wait $launcher && fail "the killed run exited with 0"
reached=$(ls "$tmp/ck" | sed -n 's/^epoch-0*\([0-9]*\)\.ckpt$/\1/p' | sort -n | tail -1)
EPOCHS=$((reached + 5))
pass

train 3 "$tmp/full.out" --epochs $EPOCHS --save-model "$tmp/full.model" || { cat "$tmp/full.out"; fail "uninterrupted run"; }

resume() {  # out-file [flags...]: resumes $tmp/ck to the end, checkpointing on, and compares
  local out=$1; shift
  train 3 "$out" --epochs $EPOCHS --resume "$tmp/ck" --checkpoint "$tmp/ck" --save-model "$tmp/resumed.model" "$@" ||
    { cat "$out"; fail "resuming"; }
  cmp -s "$tmp/full.model" "$tmp/resumed.model" || fail "$out: resumed model differs from the uninterrupted run's"
  pass
}
resume "$tmp/resume.out"
expect_contains "$tmp/resume.out" "resumed from $tmp/ck/epoch-" "resume names its checkpoint"
# A kill can land between a new checkpoint's rename and the removal of the oldest, so the
# count is checked on the run that finished.
[[ $(ls "$tmp/ck" | grep '^epoch-.*\.ckpt$' | tr '\n' ' ') == "epoch-$(printf %06d $((EPOCHS - 1))).ckpt epoch-$(printf %06d $EPOCHS).ckpt " ]] ||
  fail "kept $(ls "$tmp/ck" | tr '\n' ' '), expected the last two checkpoints"
pass

# The finished run left epochs EPOCHS-1 and EPOCHS; damage the newest and resume again.
newest=$tmp/ck/epoch-$(printf %06d $EPOCHS).ckpt
truncate -s -100 "$newest"
resume "$tmp/truncated.out"
expect_contains "$tmp/truncated.out" "skipping damaged checkpoint $newest: truncated" "truncation detected"
expect_contains "$tmp/truncated.out" "resuming from the older checkpoint $tmp/ck/epoch-$(printf %06d $((EPOCHS - 1))).ckpt" "fallback named"

printf '\xff' | dd of="$newest" bs=1 seek=200 conv=notrunc status=none
resume "$tmp/flipped.out"
expect_contains "$tmp/flipped.out" "skipping damaged checkpoint $newest: checksum mismatch" "flipped byte detected"

# Another P or other data: refused, naming what differs.
train 2 "$tmp/np.out" --epochs $EPOCHS --resume "$tmp/ck" && fail "resumed with another P"
expect_contains "$tmp/np.out" "ranks: checkpoint has 3, this run 2" "another P refused"
timeout "$HANG" "$RUN" -np 3 "$MPISGD" train --data "$tmp/other.svm" "${flags[@]}" --epochs $EPOCHS --resume "$tmp/ck" \
  >"$tmp/data.out" 2>&1 && fail "resumed with other data"
expect_contains "$tmp/data.out" "data: checkpoint's rows have identity" "other data refused"
# The model is checkpointed in the run's feature order: another order is another run.
train 3 "$tmp/order.out" --epochs $EPOCHS --resume "$tmp/ck" --feature-order file && fail "resumed in another feature order"
expect_contains "$tmp/order.out" "feature-order: checkpoint has popularity, this run file" "another feature order refused"

# The top-k strategies and ps-sync: a run stopped after 2 epochs and resumed to 4 ends
# with the 4-epoch run's bits. Ok-Topk's periods do not divide the 100 steps of an epoch, so its
# regions, reused threshold and call count must carry over.
# ps-sync's servers keep their shards with its L2 scale and AdaGrad sums (rank 2 serves), and
# its workers their gradient-dropping residuals. local-sgd's rounds of 7 steps do not divide
# the epoch either: each epoch ends on an average, and a resumed run starts its round there.
for strategy in oktopk gtopk gaussiank topk-dsa ps-sync local-sgd; do
  if [[ $strategy == ps-sync ]]; then
    more=(--servers 1 --l2 1e-4 --lr-schedule adagrad --lr 0.1 --drop-rate 0.5)
  elif [[ $strategy == local-sgd ]]; then
    more=(--sync-every 7 --l2 1e-4)
  else
    more=(--density 0.05 --repartition-period 7 --reuse-period 5)
  fi
  run_again() { timeout "$HANG" "$RUN" -np 3 "$MPISGD" train --data "$tmp/train.svm" --strategy "$strategy" "${more[@]}" \
    --batch 10 --seed 5 --no-progress "$@" >"$tmp/$strategy.out" 2>&1 || { cat "$tmp/$strategy.out"; fail "$strategy $*"; }; }
  run_again --epochs 4 --save-model "$tmp/$strategy.full"
  run_again --epochs 2 --checkpoint "$tmp/ck-$strategy"
  run_again --epochs 4 --resume "$tmp/ck-$strategy" --save-model "$tmp/$strategy.resumed"
  cmp -s "$tmp/$strategy.full" "$tmp/$strategy.resumed" || fail "$strategy: resumed model differs from the uninterrupted run's"
  pass
done

# An auto --sync-every is measured once, by the run's second average: a resumed run takes
# the checkpoint's period rather than measuring again (a new measurement could differ).
auto() { timeout "$HANG" "$RUN" -np 3 "$MPISGD" train --data "$tmp/train.svm" --strategy local-sgd --batch 10 \
  --seed 5 --no-progress "$@" >"$tmp/auto.out" 2>&1 || { cat "$tmp/auto.out"; fail "local-sgd auto $*"; }; }
auto --epochs 2 --checkpoint "$tmp/ck-auto"
settled=$(sed -n 's/.*second average of .*: averaging every \([0-9]*\) steps.*/\1/p' "$tmp/auto.out")
[[ -n $settled ]] || { cat "$tmp/auto.out"; fail "the auto period's settling line"; }
auto --epochs 3 --resume "$tmp/ck-auto"
expect_contains "$tmp/auto.out" "averaging every $settled steps, as the checkpointed run settled" \
  "the resumed run keeps the auto period"
grep -q "second average of" "$tmp/auto.out" && fail "the resumed run measured its period again"
pass

# Early stopping carries over: with --tol 1 the loss never improves enough after epoch 1,
# so with --n-iter-no-change 3 the run stops after epoch 4. Resumed from epoch 2, it must
# stop there too (a stopper counting afresh would go on to epoch 5); resumed from epoch 4,
# it trains nothing more.
stops=(--strategy allreduce --batch 10 --seed 5 --tol 1 --n-iter-no-change 3 --epochs 10 --no-progress)
early() { timeout "$HANG" "$RUN" -np 3 "$MPISGD" train --data "$tmp/train.svm" "${stops[@]}" "$@" >"$tmp/early.out" 2>&1 ||
  { cat "$tmp/early.out"; fail "early stopping $*"; }; }
early --checkpoint "$tmp/ck-early" --checkpoint-every 2 --save-model "$tmp/early.full"
expect_contains "$tmp/early.out" "stopped after epoch 4 of at most 10" "early stop logged"
early --resume "$tmp/ck-early" --save-model "$tmp/early.again"
expect_contains "$tmp/early.out" "had stopped early after epoch 4" "a finished run trains no more"
cmp -s "$tmp/early.full" "$tmp/early.again" || fail "resuming a stopped run changed its model"
rm "$tmp/ck-early/epoch-000004.ckpt"
early --resume "$tmp/ck-early" --save-model "$tmp/early.resumed"
expect_contains "$tmp/early.out" "stopped after epoch 4 of at most 10" "the resumed run stops where the first did"
cmp -s "$tmp/early.full" "$tmp/early.resumed" || fail "early-stopped run resumed from epoch 2 differs"
pass

# Three classes: a softmax run checkpointed after 2 epochs and resumed to 3 ends with the
# 3-epoch run's bits; resuming it as one-vs-rest is refused, naming the difference.
"$BUILD"/gen_data --kind url --classes 3 --rows 3000 --features 5000 --nnz 30 --seed 2 --out "$tmp/three.svm" 2>/dev/null
three() { timeout "$HANG" "$RUN" -np 3 "$MPISGD" train --data "$tmp/three.svm" --batch 10 --seed 5 --no-early-stop \
  --no-progress "$@" >"$tmp/three.out" 2>&1; }
three --epochs 3 --save-model "$tmp/three.full" || { cat "$tmp/three.out"; fail "3-class run"; }
three --epochs 2 --checkpoint "$tmp/ck-three" || { cat "$tmp/three.out"; fail "3-class checkpointed run"; }
three --epochs 3 --resume "$tmp/ck-three" --save-model "$tmp/three.resumed" || { cat "$tmp/three.out"; fail "3-class resume"; }
cmp -s "$tmp/three.full" "$tmp/three.resumed" || fail "the resumed 3-class model differs"
three --epochs 3 --resume "$tmp/ck-three" --multiclass ovr && fail "resumed a softmax run as one-vs-rest"
expect_contains "$tmp/three.out" "multiclass: checkpoint has softmax, this run ovr" "another loss refused"

# Nothing valid left: a clear error, not a fresh start.
for f in "$tmp"/ck/epoch-*.ckpt; do truncate -s 10 "$f"; done
train 3 "$tmp/none.out" --epochs $EPOCHS --resume "$tmp/ck" && fail "resumed from damaged checkpoints only"
expect_contains "$tmp/none.out" "$tmp/ck: no valid checkpoint to resume from" "no valid checkpoint"
done_checks
