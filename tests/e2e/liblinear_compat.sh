#!/usr/bin/env bash
# LIBLINEAR is the reference: on the same generated URL-like files, our logistic
# regression is within 1 accuracy point of `liblinear-train -s 0`, and LIBLINEAR's own
# `predict` reads the models we write and predicts exactly what `mpisgd predict` does;
# the same with three classes, one-vs-rest, softmax and Crammer-Singer, probabilities
# included.
source "$(dirname "$0")/lib.bash"

"$BUILD"/gen_data --kind url --rows 20000 --seed 3 --out "$tmp/train.svm" 2>/dev/null
"$BUILD"/gen_data --kind url --rows 5000 --first-row 20000 --seed 3 --out "$tmp/test.svm" 2>/dev/null

accuracy_of() { sed -n 's/^Accuracy = \([0-9.]*\)%.*/\1/p' "$1"; }

liblinear-train -s 0 -q "$tmp/train.svm" "$tmp/ll.model"
liblinear-predict "$tmp/test.svm" "$tmp/ll.model" "$tmp/ll.pred" >"$tmp/ll.out"
reference=$(accuracy_of "$tmp/ll.out")

# C = 1 in LIBLINEAR is lambda = 1 / (C M) in our mean-loss objective. One rank: with 3.2M
# features the dense allreduce would make this test slow, and other tests cover P > 1.
"$RUN" -np 1 "$MPISGD" train --data "$tmp/train.svm" --model logreg --lr 20 --lr-schedule invscaling --batch 50 \
  --epochs 10 --l2 5e-5 \
  --save-model "$tmp/ours.model" --no-progress >"$tmp/train.out" 2>&1 || { cat "$tmp/train.out"; fail "training"; }
"$RUN" -np 3 "$MPISGD" predict --model "$tmp/ours.model" --data "$tmp/test.svm" --out "$tmp/ours.pred" >"$tmp/ours.out" 2>&1
ours=$(accuracy_of "$tmp/ours.out")
echo "test accuracy: LIBLINEAR -s 0 $reference%, mpisgd $ours%"
awk -v a="$ours" -v b="$reference" 'BEGIN { d = a - b; exit !(d >= -1 && d <= 1) }' ||
  fail "accuracy $ours% is not within 1 point of LIBLINEAR's $reference%"
pass

# LIBLINEAR's predict on our models, logreg and svm: identical predictions.
"$RUN" -np 2 "$MPISGD" train --data "$tmp/train.svm" --model svm --lr 5 --batch 500 --epochs 2 --l2 5e-5 \
  --save-model "$tmp/svm.model" --no-progress >/dev/null 2>&1 || fail "svm training"
"$RUN" -np 2 "$MPISGD" predict --model "$tmp/svm.model" --data "$tmp/test.svm" --out "$tmp/svm.pred" >"$tmp/svm.out" 2>&1
for m in ours svm; do
  liblinear-predict "$tmp/test.svm" "$tmp/$m.model" "$tmp/$m.ll.pred" >"$tmp/$m.ll.out"
  cmp -s "$tmp/$m.pred" "$tmp/$m.ll.pred" || fail "$m: liblinear-predict disagrees with mpisgd predict"
  [[ $(accuracy_of "$tmp/$m.ll.out") == $(accuracy_of "$tmp/$m.out") ]] || fail "$m: accuracies differ"
  pass
done

# And we read LIBLINEAR's models, without and with a bias weight: same predictions as its own tool.
liblinear-train -s 0 -B 1 -q "$tmp/train.svm" "$tmp/llb.model"
liblinear-predict "$tmp/test.svm" "$tmp/llb.model" "$tmp/llb.pred" >/dev/null
for m in ll llb; do
  "$RUN" -np 2 "$MPISGD" predict --model "$tmp/$m.model" --data "$tmp/test.svm" --out "$tmp/$m.ours.pred" >/dev/null 2>&1
  cmp -s "$tmp/$m.pred" "$tmp/$m.ours.pred" || fail "$m: mpisgd predict disagrees with liblinear-predict on LIBLINEAR's model"
  pass
done

# Regression: LIBLINEAR reads our linreg model; its mean squared error matches our RMSE.
awk '{ t = 0; for (i = 2; i <= NF; i++) { split($i, kv, ":"); t += (kv[1] % 7 - 3) * 0.1 * kv[2] }
     $1 = sprintf("%.6f", t); print }' "$tmp/test.svm" >"$tmp/reg.svm"
"$RUN" -np 2 "$MPISGD" train --data "$tmp/reg.svm" --model linreg --lr 0.05 --batch 20 --epochs 5 \
  --save-model "$tmp/reg.model" --no-progress >/dev/null 2>&1 || fail "linreg training"
"$RUN" -np 2 "$MPISGD" predict --model "$tmp/reg.model" --data "$tmp/reg.svm" >"$tmp/reg.out" 2>&1
liblinear-predict "$tmp/reg.svm" "$tmp/reg.model" "$tmp/reg.ll.pred" >"$tmp/reg.ll.out"
rmse=$(sed -n 's/^RMSE = \([0-9.e+-]*\).*/\1/p' "$tmp/reg.out")
mse=$(sed -n 's/^Mean squared error = \([0-9.e+-]*\).*/\1/p' "$tmp/reg.ll.out")
echo "regression: mpisgd RMSE^2 $(awk -v r="$rmse" 'BEGIN { print r * r }'), LIBLINEAR MSE $mse"
awk -v r="$rmse" -v m="$mse" 'BEGIN { d = r * r - m; exit !(d * d <= 1e-8 * (m * m + 1e-12)) }' ||
  fail "regression: our RMSE $rmse does not match LIBLINEAR's MSE $mse"
pass

# Three classes: within a point of LIBLINEAR -s 0 (one-vs-rest) with ovr and softmax at
# default flags; each tool's predict reads the other's models and predicts the same
# labels, and the same probabilities to the float rounding of the values (LIBLINEAR
# reads them as doubles, we as floats); a test label the training rows lack is named
# and counted wrong.
"$BUILD"/gen_data --kind url --classes 3 --features 50000 --rows 10000 --seed 6 --out "$tmp/mc_train.svm" 2>/dev/null
"$BUILD"/gen_data --kind url --classes 3 --features 50000 --rows 3000 --first-row 10000 --seed 6 \
  --out "$tmp/mc_test.svm" 2>/dev/null
liblinear-train -s 0 -q "$tmp/mc_train.svm" "$tmp/mc_ll.model"
liblinear-predict -b 1 "$tmp/mc_test.svm" "$tmp/mc_ll.model" "$tmp/mc_ll.prob" >"$tmp/mc_ll.out"
reference=$(accuracy_of "$tmp/mc_ll.out")
same_probabilities() {  # a b: same labels, probabilities within 1e-4
  paste -d' ' "$1" "$2" | awk '{ n = NF / 2; if ($1 != $(n + 1)) exit 1
    for (i = 2; i <= n; i++) { d = $i - $(n + i); if (d > 1e-4 || d < -1e-4) exit 1 } }'
}
"$RUN" -np 3 "$MPISGD" predict --model "$tmp/mc_ll.model" --data "$tmp/mc_test.svm" --out "$tmp/mc_ll.ours.prob" \
  --probabilities ovr >/dev/null 2>&1 || fail "predict with LIBLINEAR's 3-class model"
head -n 1 "$tmp/mc_ll.prob" | cmp -s - <(head -n 1 "$tmp/mc_ll.ours.prob") || fail "3 classes: the labels line differs"
same_probabilities "$tmp/mc_ll.prob" "$tmp/mc_ll.ours.prob" ||
  fail "3 classes: mpisgd predict disagrees with liblinear-predict -b 1 on LIBLINEAR's model"
pass
for mc in ovr softmax; do
  "$RUN" -np 2 "$MPISGD" train --data "$tmp/mc_train.svm" --multiclass $mc --save-model "$tmp/mc_$mc.model" \
    --no-progress >"$tmp/mc_$mc.train" 2>&1 || { cat "$tmp/mc_$mc.train"; fail "$mc training"; }
  expect_contains "$tmp/mc_$mc.train" "3 classes, in the model's order" "$mc: the classes logged"
  "$RUN" -np 2 "$MPISGD" predict --model "$tmp/mc_$mc.model" --data "$tmp/mc_test.svm" --out "$tmp/mc_$mc.pred" \
    >"$tmp/mc_$mc.out" 2>&1
  liblinear-predict "$tmp/mc_test.svm" "$tmp/mc_$mc.model" "$tmp/mc_$mc.ll.pred" >"$tmp/mc_$mc.ll.out"
  cmp -s "$tmp/mc_$mc.pred" "$tmp/mc_$mc.ll.pred" || fail "$mc: liblinear-predict disagrees with mpisgd predict"
  ours=$(accuracy_of "$tmp/mc_$mc.out")
  echo "3 classes: LIBLINEAR -s 0 $reference%, mpisgd --multiclass $mc $ours%"
  awk -v a="$ours" -v b="$reference" 'BEGIN { exit !(a >= b - 1) }' ||
    fail "$mc: accuracy $ours% is more than 1 point below LIBLINEAR's $reference%"
  pass
done
"$RUN" -np 2 "$MPISGD" predict --model "$tmp/mc_ovr.model" --data "$tmp/mc_test.svm" --out "$tmp/mc_ovr.prob" \
  --probabilities ovr >/dev/null 2>&1
liblinear-predict -b 1 "$tmp/mc_test.svm" "$tmp/mc_ovr.model" "$tmp/mc_ovr.ll.prob" >/dev/null
same_probabilities "$tmp/mc_ovr.prob" "$tmp/mc_ovr.ll.prob" ||
  fail "ovr: mpisgd predict --probabilities ovr disagrees with liblinear-predict -b 1"
pass
# Crammer-Singer (svm): LIBLINEAR's predict reads our MCSVM_CS model and agrees; within a
# point of LIBLINEAR -s 4.
liblinear-train -s 4 -q "$tmp/mc_train.svm" "$tmp/mc_llcs.model"
liblinear-predict "$tmp/mc_test.svm" "$tmp/mc_llcs.model" /dev/null >"$tmp/mc_llcs.out"
"$RUN" -np 2 "$MPISGD" train --data "$tmp/mc_train.svm" --model svm --multiclass crammer-singer \
  --save-model "$tmp/mc_cs.model" --no-progress >"$tmp/mc_cs.train" 2>&1 || { cat "$tmp/mc_cs.train"; fail "crammer-singer training"; }
expect_contains "$tmp/mc_cs.model" "solver_type MCSVM_CS" "a Crammer-Singer model file"
"$RUN" -np 2 "$MPISGD" predict --model "$tmp/mc_cs.model" --data "$tmp/mc_test.svm" --out "$tmp/mc_cs.pred" \
  >"$tmp/mc_cs.out" 2>&1
liblinear-predict "$tmp/mc_test.svm" "$tmp/mc_cs.model" "$tmp/mc_cs.ll.pred" >/dev/null
cmp -s "$tmp/mc_cs.pred" "$tmp/mc_cs.ll.pred" || fail "crammer-singer: liblinear-predict disagrees with mpisgd predict"
ours=$(accuracy_of "$tmp/mc_cs.out") reference=$(accuracy_of "$tmp/mc_llcs.out")
echo "3 classes: LIBLINEAR -s 4 $reference%, mpisgd --model svm --multiclass crammer-singer $ours%"
awk -v a="$ours" -v b="$reference" 'BEGIN { exit !(a >= b - 1) }' ||
  fail "crammer-singer: accuracy $ours% is more than 1 point below LIBLINEAR -s 4's $reference%"
pass
"$RUN" -np 1 "$MPISGD" train --data "$tmp/mc_train.svm" --multiclass crammer-singer >"$tmp/mc_bad.out" 2>&1 &&
  fail "crammer-singer accepted for logreg"
expect_contains "$tmp/mc_bad.out" "--multiclass crammer-singer is the multi-class hinge loss: it needs --model svm" \
  "crammer-singer refused for logreg"
{ cat "$tmp/mc_test.svm"; echo "7 1:1"; echo "7 2:1"; } >"$tmp/mc_unseen.svm"
"$RUN" -np 2 "$MPISGD" predict --model "$tmp/mc_ovr.model" --data "$tmp/mc_unseen.svm" >"$tmp/mc_unseen.out" 2>&1
expect_contains "$tmp/mc_unseen.out" "2 rows have label the training rows lack (7); they count as errors" "unseen label"
expect_contains "$tmp/mc_unseen.out" "/3002)" "unseen rows counted"
[[ $(grep -c "the training rows lack" "$tmp/mc_unseen.out") == 1 ]] || fail "the unseen label is named more than once"
pass
done_checks
