#!/usr/bin/env bash
# gen_data's shape flags and --classes: what each promises holds on a few thousand rows,
# any slice and any thread count still give the same bytes, flags left out or given their
# defaults change nothing, and bad values are refused by name.
source "$(dirname "$0")/lib.bash"

GEN=$BUILD/gen_data
rows=4000 share=0.25 columns=64
shape=(--kind url --features 50000 --seed 4 --real-columns "$columns" --positive-share "$share"
       --bayes-accuracy 0.97 --popularity-exponent 0.7)
"$GEN" "${shape[@]}" --rows "$rows" --out "$tmp/shape.svm" 2>/dev/null

# The threshold is the (1 - S) quantile of 2,048 calibration rows, so the share of rows
# positive in expectation is itself off S by a deviation of sqrt(S(1-S)/2048); the rows
# written add sqrt(S(1-S)/rows). Five of the two together cannot be crossed by chance.
awk -v s="$share" '
  $1 == "+1" { pos++ }
  END {
    tol = 5 * sqrt(s * (1 - s) * (1 / 2048 + 1 / NR)); got = pos / NR
    if (got < s - tol || got > s + tol) { printf "positive share %.4f, asked %s +- %.4f\n", got, s, tol; exit 1 }
  }' "$tmp/shape.svm" || fail "--positive-share $share"
pass

# Column c is in a row with probability p_c in [0.3, 0.8]; a fraction over the rows is off
# p_c by at most sqrt(1/4 / rows) in deviation, five of which bound it here. Real columns
# hold values in (0, 1), every binary feature after them the value 1.
awk -v c="$columns" '
  {
    for (i = 2; i <= NF; i++) {
      split($i, e, ":"); f = e[1] + 0; v = e[2] + 0
      if (f <= c) { seen[f]++; if (!(v > 0 && v < 1)) { print "line " NR ": real column " f " has value " e[2]; exit 1 } }
      else if (e[2] != "1") { print "line " NR ": binary feature " f " has value " e[2]; exit 1 }
    }
  }
  END {
    tol = 5 * sqrt(0.25 / NR)
    for (f = 1; f <= c; f++) {
      got = seen[f] / NR
      if (got < 0.3 - tol || got > 0.8 + tol) { printf "column %d in %.4f of rows, not in [0.3, 0.8] +- %.4f\n", f, got, tol; exit 1 }
    }
  }' "$tmp/shape.svm" || fail "--real-columns $columns"
pass

# Any slice, with any thread count, is the same lines as the whole file; webspam too, where
# the real columns sit beside normalised trigram counts.
"$GEN" "${shape[@]}" --rows 1000 --first-row 1234 --threads 3 --out "$tmp/slice.svm" 2>/dev/null
sed -n 1235,2234p "$tmp/shape.svm" | cmp - "$tmp/slice.svm" || fail "slice of the shaped url file"
pass
webspam=(--kind webspam --features 100000 --nnz 300 --seed 4 --real-columns 10 --positive-share 0.3
         --bayes-accuracy 0.9 --popularity-exponent 1.5)
"$GEN" "${webspam[@]}" --rows 300 --threads 1 --out "$tmp/webspam.svm" 2>/dev/null
"$GEN" "${webspam[@]}" --rows 100 --first-row 150 --threads 2 --out "$tmp/webspam_slice.svm" 2>/dev/null
sed -n 151,250p "$tmp/webspam.svm" | cmp - "$tmp/webspam_slice.svm" || fail "slice of the shaped webspam file"
pass

# Without the flags the kinds keep their shape: the same bytes from a second run on another
# thread count, and from the flags given their default values.
plain=(--kind url --rows 3000 --features 50000 --seed 3)
"$GEN" "${plain[@]}" --threads 1 --out "$tmp/plain1.svm" 2>/dev/null
"$GEN" "${plain[@]}" --threads 2 --out "$tmp/plain2.svm" 2>/dev/null
"$GEN" "${plain[@]}" --popularity-exponent 1 --positive-share 0.3333333333333333 --out "$tmp/plain3.svm" 2>/dev/null
cmp "$tmp/plain1.svm" "$tmp/plain2.svm" || fail "default url output differs between runs"
cmp "$tmp/plain1.svm" "$tmp/plain3.svm" || fail "the shape flags at their defaults change the url output"
pass

# --classes 2 is the +1/-1 labels, byte for byte, on the kind's shape and on a shaped file.
"$GEN" "${plain[@]}" --classes 2 --out "$tmp/plain4.svm" 2>/dev/null
cmp "$tmp/plain1.svm" "$tmp/plain4.svm" || fail "--classes 2 changes the url output"
"$GEN" "${shape[@]}" --classes 2 --rows "$rows" --out "$tmp/shape2.svm" 2>/dev/null
cmp "$tmp/shape.svm" "$tmp/shape2.svm" || fail "--classes 2 changes the shaped url output"
pass

# K classes: labels 0..K-1 only, each near 1/K of the rows. The offsets make each class's
# expected share over 2,048 calibration rows 1/K, to within one row (1/2048); a class's
# expected share over all rows is then off 1/K by a deviation of at most sqrt(p(1-p)/2048),
# p = 1/K, and the rows written add sqrt(p(1-p)/rows). Five of the two together cannot be
# crossed by chance: with K = 5 and 4,000 rows, every class holds 14.5% to 25.5%.
k=5
classes=(--kind url --features 50000 --seed 4 --classes "$k" --real-columns 16 --bayes-accuracy 0.8)
"$GEN" "${classes[@]}" --rows "$rows" --out "$tmp/classes.svm" 2>/dev/null
awk -v k="$k" '
  $1 !~ /^[0-9]+$/ || $1 >= k { print "line " NR ": label " $1 " is not one of 0.." k - 1; exit 1 }
  { n[$1]++ }
  END {
    p = 1 / k; tol = 5 * sqrt(p * (1 - p) * (1 / 2048 + 1 / NR)) + 1 / 2048
    for (c = 0; c < k; c++) {
      got = n[c] / NR
      if (got < p - tol || got > p + tol) { printf "class %d in %.4f of rows, not %.4f +- %.4f\n", c, got, p, tol; exit 1 }
    }
  }' "$tmp/classes.svm" || fail "--classes $k"
pass
# A slice on another thread count is the same lines, with K classes too.
"$GEN" "${classes[@]}" --rows 1000 --first-row 1234 --threads 3 --out "$tmp/classes_slice.svm" 2>/dev/null
sed -n 1235,2234p "$tmp/classes.svm" | cmp - "$tmp/classes_slice.svm" || fail "slice of the --classes $k file"
pass

# Bad values end the run with a message that names the flag, and leave no file.
refused() {  # flag value expected-message [other flags]
  local rc=0 flag=$1 value=$2 message=$3
  shift 3
  "$GEN" --kind url --rows 10 --features 50000 "$flag" "$value" "$@" --out "$tmp/bad.svm" >"$tmp/bad.out" 2>&1 || rc=$?
  [[ $rc -ne 0 ]] || fail "$flag $value $* was accepted"
  expect_contains "$tmp/bad.out" "$message" "$flag $value $* refused"
  [[ ! -e $tmp/bad.svm ]] || fail "$flag $value $* left a file"
}
refused --positive-share 0 "--positive-share: must be in (0, 1)"
refused --positive-share 1.5 "--positive-share: must be in (0, 1)"
refused --bayes-accuracy 0.5 "--bayes-accuracy: must be in (0.5, 1)"
refused --bayes-accuracy 1 "--bayes-accuracy: must be in (0.5, 1)"
refused --bayes-accuracy 0.6 "--bayes-accuracy: 0.6 is no more than always answering the majority label"
refused --real-columns -3 "--real-columns: must not be negative"
refused --popularity-exponent -1 "--popularity-exponent: must be in [0, 2]"
refused --classes 1 "--classes: Value 1 not in range"
refused --classes 1001 "--classes: Value 1001 not in range"
refused --positive-share 0.3 "--positive-share: has no meaning with --classes 5" --classes 5
refused --bayes-accuracy 0.2 "--bayes-accuracy: must be in (1/K, 1) with --classes 5" --classes 5
refused --bayes-accuracy 0.999 "--bayes-accuracy: 0.999 is out of reach with --classes 5" --classes 5
done_checks
