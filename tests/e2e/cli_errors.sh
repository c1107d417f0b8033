#!/usr/bin/env bash
# Bad input ends the job on every rank, promptly, with one message naming file, line and
# cause, a non-zero exit, and no model or profile file (not even a temporary one).
source "$(dirname "$0")/lib.bash"

bad_case() {  # name content expected-message [extra flags]; PROFILE_EXT names the profile
  local name=$1 content=$2 expected=$3 ext=${PROFILE_EXT:-csv}; shift 3
  local data="$tmp/$name.svm"
  printf '%b' "$content" >"$data"
  local rc=0
  timeout 60 "$RUN" -np 3 "$MPISGD" train --data "$data" --save-model "$tmp/$name.model" \
    --profile "$tmp/$name.$ext" "$@" >"$tmp/$name.out" 2>&1 || rc=$?
  [[ $rc -ne 124 ]] || fail "$name: the job hung"
  [[ $rc -ne 0 ]] || fail "$name: exit code 0 on bad input"
  expect_contains "$tmp/$name.out" "$expected" "$name"
  [[ $(grep -c "\[error\]" "$tmp/$name.out") -eq 1 ]] || fail "$name: expected exactly one error line"
  for f in "$tmp/$name.model" "$tmp/$name.$ext" "$tmp/$name.model.tmp" "$tmp/$name.$ext.tmp"; do
    [[ ! -e $f ]] || fail "$name: left $f behind"
  done
  pass
}

rows='+1 1:1 3:0.5\n-1 2:1\n+1 1:0.5 4:1\n-1 2:0.5 3:1\n'
bad_case label "${rows}${rows}abc 1:1\n" "label.svm:9: label 'abc' is not a number"
bad_case value "${rows}+1 1:x\n${rows}" "value.svm:5: value 'x' of index 1 is not a number"
bad_case colon "${rows}${rows}${rows}+1 1:1 3 4:1\n" "colon.svm:13: missing ':' in '3'"
bad_case zero "+1 0:1\n${rows}" "zero.svm:1: index 0"
bad_case negative "${rows}-1 -3:1\n" "negative.svm:5: negative index"
bad_case order "${rows}${rows}+1 5:1 5:1\n" "order.svm:9: indices not strictly ascending (5 after 5)"
bad_case nan "${rows}+1 2:nan\n" "nan.svm:5: value 'nan' of index 2 is NaN, Inf or out of range"
bad_case inf "${rows}${rows}+1 2:-inf\n" "inf.svm:9: value '-inf' of index 2 is NaN, Inf or out of range"
bad_case dim "${rows}+1 9:1\n" "dim.svm:5: index 9 is above --dim 4" --dim 4
bad_case wide_dim "${rows}" "--dim 4294967297 is too large: indices are 32-bit" --dim 4294967297
# One stray index sizes the model: named with its line before anything that large is made
# (3 ranks x 48 GiB is more than any CI machine has).
bad_case stray_index "${rows}-1 4294967294:1\n" "stray_index.svm:5: index 4294967294 makes N = 4294967294 features: the model takes at least"
bad_case empty "" "empty.svm: no rows"
bad_case comments "# header only\n\n" "comments.svm: no rows"
bad_case classes "${rows}${rows}2 1:1\n" "classes.svm:9: third distinct label 2"
PROFILE_EXT=txt bad_case profile_name "${rows}" "name it .csv or .jsonl"
# Top-k settings that cannot work together.
bad_case density_dense "${rows}" "--density and --k sparsify the update" --density 0.1
bad_case density_and_k "${rows}" "give --density or --k, not both" --strategy topk-ag --density 0.1 --k 5
bad_case gaussiank_select "${rows}" "gaussiank selects by its gaussian threshold" --strategy gaussiank --select exact
# CR-only line ends with a comment line: an error, not one row with the rest a comment.
bad_case cr_comment "+1 1:1\r# note\r-1 2:1\r" "cr_comment.svm:1: carriage return inside a line"
# --max-memory: bad values, and a limit below a rank's rows (checked before reading them).
bad_case max_memory_suffix "${rows}" "--max-memory 12Q: unknown suffix 'Q'" --max-memory 12Q
bad_case max_memory_negative "${rows}" "--max-memory -1: not a size" --max-memory -1
bad_case max_memory_small "${rows}${rows}" "max_memory_small.svm: rank 0 of 3 would hold about" --max-memory 16
# Checkpoint flags: timing without a directory, a directory that cannot be, nothing to
# resume from.
bad_case ckpt_no_dir "${rows}" "--checkpoint-every and --checkpoint-seconds need --checkpoint DIR" --checkpoint-every 2
bad_case ckpt_file "${rows}" "cannot create the directory" --checkpoint /dev/null
bad_case resume_missing "${rows}" "no-such-dir: no such checkpoint directory" --resume "$tmp/no-such-dir"

rc=0
timeout 60 "$RUN" -np 2 "$MPISGD" train --data "$tmp/does-not-exist.svm" >"$tmp/missing.out" 2>&1 || rc=$?
[[ $rc -ne 0 && $rc -ne 124 ]] || fail "missing file: exit code $rc"
expect_contains "$tmp/missing.out" "does-not-exist.svm: cannot open for reading" "missing file"

# A single class trains, with a warning.
printf '+1 1:1\n+1 2:1\n' >"$tmp/one.svm"
"$RUN" -np 2 "$MPISGD" train --data "$tmp/one.svm" --epochs 1 >"$tmp/one.out" 2>&1 || fail "single class should train"
expect_contains "$tmp/one.out" "every row has label 1" "single class warning"

# Bad flags: CLI11's message, non-zero exit, no hang.
rc=0
timeout 60 "$RUN" -np 2 "$MPISGD" train --data x --strategy nope >"$tmp/flag.out" 2>&1 || rc=$?
[[ $rc -ne 0 && $rc -ne 124 ]] || fail "bad flag: exit code $rc"
expect_contains "$tmp/flag.out" "--strategy" "bad strategy flag"
for bad in "--density 1.5" "--k 0" "--select nope" "--reuse-period 0" "--repartition-period 0"; do
  rc=0
  # shellcheck disable=SC2086  # the flag and its value are two words
  timeout 60 "$RUN" -np 2 "$MPISGD" train --data x --strategy topk-ag $bad >"$tmp/flag.out" 2>&1 || rc=$?
  [[ $rc -ne 0 && $rc -ne 124 ]] || fail "$bad: exit code $rc"
  expect_contains "$tmp/flag.out" "${bad%% *}" "$bad"
done
for bad in "--checkpoint-every 0" "--checkpoint-every -2" "--checkpoint-every x" "--checkpoint-seconds 0" \
  "--checkpoint-seconds nan" "--checkpoint-seconds inf"; do
  rc=0
  # shellcheck disable=SC2086  # the flag and its value are two words
  timeout 60 "$RUN" -np 2 "$MPISGD" train --data x --checkpoint "$tmp/ck" $bad >"$tmp/flag.out" 2>&1 || rc=$?
  [[ $rc -ne 0 && $rc -ne 124 ]] || fail "$bad: exit code $rc"
  expect_contains "$tmp/flag.out" "${bad%% *}: must be positive" "$bad"
done
for bad in -1 nan inf 1e9 abc; do
  rc=0
  timeout 60 "$RUN" -np 2 "$MPISGD" train --data x --comm-timeout "$bad" >"$tmp/flag.out" 2>&1 || rc=$?
  [[ $rc -ne 0 && $rc -ne 124 ]] || fail "--comm-timeout $bad: exit code $rc"
  expect_contains "$tmp/flag.out" "--comm-timeout" "--comm-timeout $bad"
done
done_checks
