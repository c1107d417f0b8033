#!/usr/bin/env bash
# LIBLINEAR is the reference: on the same generated URL-like files, our logistic
# regression is within 1 accuracy point of `liblinear-train -s 0`, and LIBLINEAR's own
# `predict` reads the models we write and predicts exactly what `mpisgd predict` does.
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
done_checks
