#!/usr/bin/env bash
# The trainer as a user drives it: --help, --config files, the binary cache, JSON-lines
# profiles, predictions in file order, the same model from the same seed, the warning on
# threads that share a core.
source "$(dirname "$0")/lib.bash"

"$BUILD"/gen_data --kind url --rows 3000 --features 5000 --nnz 30 --seed 2 --out "$tmp/train.svm" 2>/dev/null
"$BUILD"/gen_data --kind url --rows 700 --features 5000 --nnz 30 --first-row 3000 --seed 2 --out "$tmp/test.svm" 2>/dev/null

for sub in train predict convert; do
  "$MPISGD" "$sub" --help >"$tmp/help.out"
  expect_contains "$tmp/help.out" "--data" "$sub --help"
done
"$MPISGD" train --help >"$tmp/help.out"
expect_contains "$tmp/help.out" "allreduce: dense MPI_Allreduce" "strategies listed in train --help"
expect_contains "$tmp/help.out" "[train] section" "train --help names the config file section"

# A config file gives the same flags; the command line still wins for what it names.
cat >"$tmp/run.ini" <<INI
[train]
data = $tmp/train.svm
test = $tmp/test.svm
epochs = 2
batch = 64
lr = 3
profile = $tmp/profile.jsonl
INI
"$RUN" -np 3 "$MPISGD" train --config "$tmp/run.ini" --seed 7 --save-model "$tmp/a.model" --no-progress >"$tmp/cfg.out" 2>&1 ||
  { cat "$tmp/cfg.out"; fail "training from --config"; }
expect_contains "$tmp/cfg.out" "epochs=2 (at most" "config values used"
expect_contains "$tmp/cfg.out" "step: batch 64/worker (global 192), lr 3, schedule invscaling" "config step used"
expect_contains "$tmp/cfg.out" "seed=7" "command line flag used"
/usr/bin/python3 - "$tmp/profile.jsonl" <<'PY' || fail "profile.jsonl is not one JSON object per epoch"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert [r["epoch"] for r in rows] == [1, 2], rows
for r in rows:
    assert r["ranks"] == 3 and r["bytes_sent_mean"] > 0 and 0 < r["test_accuracy"] <= 1, r
    assert r["wall_s_min"] <= r["wall_s_mean"] <= r["wall_s_max"], r
PY
pass

# Same seed, P and T: the same model file, byte for byte.
"$RUN" -np 3 "$MPISGD" train --config "$tmp/run.ini" --seed 7 --save-model "$tmp/b.model" --no-progress >/dev/null 2>&1
cmp -s "$tmp/a.model" "$tmp/b.model" || fail "same seed gave a different model"
pass

# The binary cache holds exactly the text's rows: on one rank both give the same model.
"$RUN" -np 2 "$MPISGD" convert --data "$tmp/train.svm" --out "$tmp/train.bin" >"$tmp/convert.out" 2>&1 ||
  { cat "$tmp/convert.out"; fail "convert"; }
[[ ! -e "$tmp/train.bin.tmp" ]] || fail "convert left its temporary file"
for input in train.svm train.bin; do
  "$RUN" -np 1 "$MPISGD" train --data "$tmp/$input" --epochs 2 --save-model "$tmp/$input.model" --no-progress >/dev/null 2>&1 ||
    fail "training on $input"
done
cmp -s "$tmp/train.svm.model" "$tmp/train.bin.model" || fail "text and binary cache trained different models"
pass

# The model keeps popular features together (the default), yet writes its file in the
# data's numbering: the same model as in the file's order, to rounding, at P = 1 and 3.
for np in 1 3; do
  for order in popularity file; do
    "$RUN" -np $np "$MPISGD" train --data "$tmp/train.svm" --epochs 2 --batch 64 --lr 3 --feature-order $order \
      --save-model "$tmp/$order.model" --no-progress >"$tmp/$order.out" 2>&1 ||
      { cat "$tmp/$order.out"; fail "training with --feature-order $order"; }
  done
  expect_contains "$tmp/popularity.out" "features renumbered by popularity" "the renumbering is logged"
  ! grep -q "renumbered" "$tmp/file.out" || fail "--feature-order file renumbered"
  # Time to accuracy counts the whole set-up (scripts/bench_time_to_accuracy.py reads it).
  expect_contains "$tmp/popularity.out" "set up in" "the set-up before the first step is logged"
  /usr/bin/python3 - "$tmp/popularity.model" "$tmp/file.model" <<'PY' || fail "P = $np: --feature-order changed the model"
import sys
def weights(path):
    lines = open(path).read().split("\n")
    return [float(l.split()[0]) for l in lines[lines.index("w") + 1:] if l.strip()]
a, b = weights(sys.argv[1]), weights(sys.argv[2])
assert len(a) == len(b) == 5000, (len(a), len(b))
scale = max(abs(x) for x in b)
worst = max(abs(x - y) for x, y in zip(a, b))
assert scale > 0.1 and worst <= 1e-4 * scale, (scale, worst)
PY
  pass
done

# Predictions: one line per row, in file order whatever the number of ranks.
"$RUN" -np 1 "$MPISGD" predict --model "$tmp/a.model" --data "$tmp/test.svm" --out "$tmp/p1.txt" >/dev/null 2>&1
"$RUN" -np 4 "$MPISGD" predict --model "$tmp/a.model" --data "$tmp/test.svm" --out "$tmp/p4.txt" >/dev/null 2>&1
[[ $(wc -l <"$tmp/p1.txt") -eq 700 ]] || fail "expected 700 predictions"
cmp -s "$tmp/p1.txt" "$tmp/p4.txt" || fail "predictions depend on the number of ranks"
pass

# The partition line is reduced to rank 0 and logged there only: once per file, even
# where --log-level debug lets every rank log.
"$RUN" -np 3 "$MPISGD" train --data "$tmp/train.svm" --test "$tmp/test.svm" --epochs 1 --log-level debug \
  --no-progress >"$tmp/debug.out" 2>&1 || { cat "$tmp/debug.out"; fail "training at --log-level debug"; }
[[ $(grep -c "rows per rank" "$tmp/debug.out") -eq 2 ]] || { grep "rows per rank" "$tmp/debug.out"; fail "partition lines: expected one per file"; }
expect_contains "$tmp/debug.out" "train.svm: 3000 rows" "partition line of the training file"
pass

# --threads beyond the CPUs a rank may run on (mpirun's default binding at P <= 2) is
# named with the launch that fixes it.
taskset -c 0 "$RUN" -np 1 "$MPISGD" train --data "$tmp/train.svm" --epochs 1 --threads 2 --no-progress \
  >"$tmp/bound.out" 2>&1 || { cat "$tmp/bound.out"; fail "training bound to one CPU"; }
expect_contains "$tmp/bound.out" "--threads 2 but a rank may run on only 1 CPU" "warning on threads sharing a core"
expect_contains "$tmp/bound.out" "--bind-to none" "the warning names the fix"
if [[ $(nproc) -ge 2 ]]; then
  "$RUN" -np 1 "$MPISGD" train --data "$tmp/train.svm" --epochs 1 --threads 2 --no-progress >"$tmp/free.out" 2>&1
  ! grep -q "threads share" "$tmp/free.out" || fail "warned about sharing with CPUs to spare"
fi
pass

# Parameter servers: the last --servers ranks serve and the others train; both strategies
# run to the end and exit 0, log their shards and a profile line, and their model predicts.
expect_contains "$tmp/help.out" "ps-sync: parameter servers" "ps-sync listed in train --help"
expect_contains "$tmp/help.out" "--max-staleness" "--max-staleness in train --help"
for strategy in ps-sync ps-async; do
  "$RUN" -np 3 "$MPISGD" train --data "$tmp/train.svm" --test "$tmp/test.svm" --epochs 2 --batch 64 --lr 3 \
    --strategy $strategy --servers 1 --save-model "$tmp/$strategy.model" --profile "$tmp/$strategy.csv" \
    --no-progress >"$tmp/$strategy.out" 2>&1 || { cat "$tmp/$strategy.out"; fail "training with $strategy"; }
  expect_contains "$tmp/$strategy.out" "shard 0 on rank 2: features [0, 5000)" "$strategy logs its shard"
  expect_contains "$tmp/$strategy.out" "1 server busy" "$strategy prints its profile line"
  /usr/bin/python3 - "$tmp/$strategy.csv" <<'PY' || fail "$strategy: profile without the parameter-server columns"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 2, rows
for r in rows:
    assert r["workers"] == "2" and r["servers"] == "1" and float(r["staleness_max"]) >= 0, r
    assert 0 < float(r["test_accuracy"]) <= 1, r
PY
  "$RUN" -np 2 "$MPISGD" predict --model "$tmp/$strategy.model" --data "$tmp/test.svm" >"$tmp/predict.out" 2>&1 ||
    { cat "$tmp/predict.out"; fail "predict with the $strategy model"; }
  pass
done
expect_contains "$tmp/ps-async.out" "staleness unbounded" "ps-async says its staleness is unbounded"
if "$RUN" -np 2 "$MPISGD" train --data "$tmp/train.svm" --strategy ps-sync --servers 2 --no-progress >"$tmp/ps_bad.out" 2>&1; then
  fail "--servers 2 on 2 ranks trained"
fi
expect_contains "$tmp/ps_bad.out" "--servers 2 leaves no rank to train on 2 ranks" "S >= P is one error at start"
expect_contains "$tmp/help.out" "--drop-rate" "--drop-rate in train --help"
"$RUN" -np 3 "$MPISGD" train --data "$tmp/train.svm" --epochs 1 --batch 64 --lr 3 --strategy ps-async --drop-rate 0.9 \
  --no-progress >"$tmp/ps_drop.out" 2>&1 || { cat "$tmp/ps_drop.out"; fail "training with --drop-rate"; }
expect_contains "$tmp/ps_drop.out" "--drop-rate 0.9: pushes and pulls carry the largest 10%" "--drop-rate logged at start"
if "$RUN" -np 3 "$MPISGD" train --data "$tmp/train.svm" --strategy ps-sync --drop-rate 1 --no-progress >"$tmp/ps_drop_bad.out" 2>&1; then
  fail "--drop-rate 1 trained"
fi
expect_contains "$tmp/ps_drop_bad.out" "--drop-rate is the fraction of each update left out: it must be in [0, 1)" "--drop-rate 1 is one error at start"
expect_contains "$tmp/help.out" "--max-overlap-steps" "--overlap in train --help"
"$RUN" -np 3 "$MPISGD" train --data "$tmp/train.svm" --epochs 1 --batch 64 --lr 3 --strategy ps-sync --overlap \
  --max-overlap-steps 2 --no-progress >"$tmp/ps_overlap.out" 2>&1 || { cat "$tmp/ps_overlap.out"; fail "training with --overlap"; }
expect_contains "$tmp/ps_overlap.out" "--overlap: a worker computes up to 2 steps while its push and pull are in flight" "--overlap logged at start"
for bad in "--max-overlap-steps 2" "--overlap --max-overlap-steps -1"; do
  # shellcheck disable=SC2086  # the flags are split on purpose
  if "$RUN" -np 3 "$MPISGD" train --data "$tmp/train.svm" --strategy ps-sync $bad --no-progress >"$tmp/ps_overlap_bad.out" 2>&1; then
    fail "$bad trained"
  fi
  expect_contains "$tmp/ps_overlap_bad.out" "--max-overlap-steps" "$bad is one error at start"
done
done_checks
