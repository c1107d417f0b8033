#!/usr/bin/env bash
# Bad input ends the job on every rank, promptly, with one message naming file, line and
# cause, a non-zero exit, and no model or profile file (not even a temporary one).
source "$(dirname "$0")/lib.bash"

bad_case() {  # name content expected-message [extra flags]; PROFILE_EXT names the profile
  local name=$1 content=$2 expected=$3 ext=${PROFILE_EXT:-csv}; shift 3
  local data="$tmp/$name.svm"
  printf '%b' "$content" >"$data"
  local rc=0
  timeout "$HANG" "$RUN" -np 3 "$MPISGD" train --data "$data" --save-model "$tmp/$name.model" \
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
bad_case softmax_svm "${rows}" "--multiclass softmax is the multinomial logistic loss: it needs --model logreg" --model svm --multiclass softmax
bad_case no_gpu_path "${rows}" "--device gpu: this build has no GPU path; build with \`make GPU=1\`" \
  --device gpu
bad_case gpu_id_on_cpu "${rows}" "--gpu-id 1 is for --device gpu" --gpu-id 1
PROFILE_EXT=txt bad_case profile_name "${rows}" "name it .csv or .jsonl"
# Top-k settings that cannot work together.
bad_case density_dense "${rows}" "--density and --k sparsify the update" --strategy allreduce --density 0.1
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
bad_case ckpt_file "${rows}" "--checkpoint /dev/null/ck: /dev/null is not a directory" --checkpoint /dev/null/ck
bad_case resume_missing "${rows}" "no-such-dir: no such checkpoint directory" --resume "$tmp/no-such-dir"

rc=0
timeout "$HANG" "$RUN" -np 2 "$MPISGD" train --data "$tmp/does-not-exist.svm" >"$tmp/missing.out" 2>&1 || rc=$?
[[ $rc -ne 0 && $rc -ne 124 ]] || fail "missing file: exit code $rc"
expect_contains "$tmp/missing.out" "does-not-exist.svm: cannot open for reading" "missing file"

# A single class trains, with a warning.
printf '+1 1:1\n+1 2:1\n' >"$tmp/one.svm"
"$RUN" -np 2 "$MPISGD" train --data "$tmp/one.svm" --epochs 1 >"$tmp/one.out" 2>&1 || fail "single class should train"
expect_contains "$tmp/one.out" "every row has label 1" "single class warning"

# Bad flags: CLI11's message, non-zero exit, no hang.
rc=0
timeout "$HANG" "$RUN" -np 2 "$MPISGD" train --data x --strategy nope >"$tmp/flag.out" 2>&1 || rc=$?
[[ $rc -ne 0 && $rc -ne 124 ]] || fail "bad flag: exit code $rc"
expect_contains "$tmp/flag.out" "--strategy" "bad strategy flag"
for bad in "--density 1.5" "--k 0" "--select nope" "--reuse-period 0" "--repartition-period 0" "--pack-runs maybe"; do
  rc=0
  # shellcheck disable=SC2086  # the flag and its value are two words
  timeout "$HANG" "$RUN" -np 2 "$MPISGD" train --data x --strategy topk-ag $bad >"$tmp/flag.out" 2>&1 || rc=$?
  [[ $rc -ne 0 && $rc -ne 124 ]] || fail "$bad: exit code $rc"
  expect_contains "$tmp/flag.out" "${bad%% *}" "$bad"
done
for bad in "--checkpoint-every 0" "--checkpoint-every -2" "--checkpoint-every x" "--checkpoint-seconds 0" \
  "--checkpoint-seconds nan" "--checkpoint-seconds inf"; do
  rc=0
  # shellcheck disable=SC2086  # the flag and its value are two words
  timeout "$HANG" "$RUN" -np 2 "$MPISGD" train --data x --checkpoint "$tmp/ck" $bad >"$tmp/flag.out" 2>&1 || rc=$?
  [[ $rc -ne 0 && $rc -ne 124 ]] || fail "$bad: exit code $rc"
  expect_contains "$tmp/flag.out" "${bad%% *}: '${bad#* }' is not a positive" "$bad"
done
for bad in -1 nan inf 1e9 abc; do
  rc=0
  timeout "$HANG" "$RUN" -np 2 "$MPISGD" train --data x --comm-timeout "$bad" >"$tmp/flag.out" 2>&1 || rc=$?
  [[ $rc -ne 0 && $rc -ne 124 ]] || fail "--comm-timeout $bad: exit code $rc"
  expect_contains "$tmp/flag.out" "--comm-timeout" "--comm-timeout $bad"
done
# Bad flag values and --config files: one sentence saying what was given and what is
# wanted (from a file, also its name and line), printed once, by rank 0, before anything
# is read; a non-zero exit on every rank; never CLI11's 309-digit range bound.
flag_case() {  # name expected-message mpisgd-arguments...
  local name=$1 expected=$2 rc=0; shift 2
  # Each rank appends its exit code and exits 0: mpirun's code says only that some rank
  # failed, and it kills the others once one has.
  # shellcheck disable=SC2016  # expanded by each rank's bash
  timeout "$HANG" "$RUN" -np 2 bash -c 'rcs=$1; shift; "$@"; echo "$?" >>"$rcs"' _ \
    "$tmp/$name.rcs" "$MPISGD" "$@" >"$tmp/$name.out" 2>&1 || rc=$?
  [[ $rc -ne 124 ]] || fail "$name: the job hung"
  [[ $(grep -cvx 0 "$tmp/$name.rcs") -eq 2 ]] ||
    fail "$name: rank exit codes $(tr '\n' ' ' <"$tmp/$name.rcs"), wanted 2 non-zero"
  expect_contains "$tmp/$name.out" "$expected" "$name"
  [[ $(grep -cF -- "$expected" "$tmp/$name.out") -eq 1 ]] || fail "$name: expected the message once, from rank 0"
  ! grep -qE '[0-9]{40}' "$tmp/$name.out" || fail "$name: printed a number of 40 digits or more"
  pass
}
printf '%b' "${rows}" >"$tmp/cfg_rows.svm"
flag_case epochs_word "--epochs: 'x' is not a positive whole number" train --data x --epochs x
flag_case epochs_negative "--epochs: '-3' is not a positive whole number" train --data x --epochs -3
flag_case epochs_fraction "--epochs: '2.5' is not a positive whole number" train --data x --epochs 2.5
flag_case density_above_one "--density: '1.5' is not a number from 0 to 1" train --data x --density 1.5
flag_case threads_zero "--threads: '0' is not a positive whole number" train --data x --threads 0
flag_case predict_threads "--threads: 'two' is not a positive whole number" predict --model m --data x --threads two
flag_case strategy_typo "--strategy: 'sparse-atuo' is not one of allreduce," train --data x --strategy sparse-atuo
flag_case sync_every_elsewhere "--sync-every is for --strategy local-sgd, not allreduce" \
  train --data x --strategy allreduce --sync-every 4
flag_case local_sgd_density "local-sgd averages whole models" train --data x --strategy local-sgd --density 0.1
flag_case local_sgd_adagrad "--lr-schedule adagrad: local-sgd averages the models" \
  train --data "$tmp/cfg_rows.svm" --strategy local-sgd --lr-schedule adagrad
# --config: an unknown key or section names file, line and the nearest known name; a bad
# value names file and line; keys outside any section are the subcommand's.
printf '[train]\ndata = %s\nepochz = 2\n' "$tmp/cfg_rows.svm" >"$tmp/cfg_key.toml"
flag_case cfg_key "cfg_key.toml:3: unknown key 'epochz' in [train] (did you mean 'epochs'?)" train --config "$tmp/cfg_key.toml"
printf '[trian]\ndata = %s\n' "$tmp/cfg_rows.svm" >"$tmp/cfg_section.toml"
flag_case cfg_section "cfg_section.toml:1: unknown section [trian] (did you mean [train]?)" train --config "$tmp/cfg_section.toml"
printf '# a run\n[train]\ndata = "%s"\nepochs = x\n' "$tmp/cfg_rows.svm" >"$tmp/cfg_value.toml"
flag_case cfg_value "cfg_value.toml:4: --epochs: 'x' is not a positive whole number" train --config "$tmp/cfg_value.toml"
printf 'data = %s\nthreads = 0\n' "$tmp/cfg_rows.svm" >"$tmp/cfg_top_value.ini"
flag_case cfg_top_value "cfg_top_value.ini:2: --threads: '0' is not a positive whole number" train --config "$tmp/cfg_top_value.ini"
printf 'epochs = 1\ndata = %s\nno-early-stop = true\n' "$tmp/cfg_rows.svm" >"$tmp/cfg_top.toml"
timeout "$HANG" "$RUN" -np 2 "$MPISGD" train --config "$tmp/cfg_top.toml" --no-progress >"$tmp/cfg_top.out" 2>&1 ||
  { cat "$tmp/cfg_top.out"; fail "keys outside any section: training failed"; }
expect_contains "$tmp/cfg_top.out" "epochs=1 (at most)" "keys outside any section set --epochs and --no-early-stop"

# A NUL byte in LIBSVM text, near the start (inside a cache header's 64 bytes) or past the
# first thousand lines: the text parser's message with its line, from train and convert.
printf '+1 1:1\n-1 2:\0\n' >"$tmp/nul_early.svm"
{ for _ in $(seq 750); do printf '+1 1:1 3:0.5\n-1 2:1\n'; done; printf -- '-1 2:\0\n%b' "$rows"; } >"$tmp/nul_late.svm"
for nul in early:2 late:1501; do
  file=$tmp/nul_${nul%%:*}.svm
  expected="nul_${nul%%:*}.svm:${nul#*:}: value '\x00' of index 2 is not a number"
  flag_case "nul_${nul%%:*}_train" "$expected" train --data "$file"
  flag_case "nul_${nul%%:*}_convert" "$expected" convert --data "$file" --out "$tmp/nul.bin"
  [[ ! -e $tmp/nul.bin && ! -e $tmp/nul.bin.tmp ]] || fail "convert of $file left a cache behind"
done
# Outputs that cannot be written are named before any data is read: the data file named
# here does not exist, so a message about the output shows it was checked first.
absent=$tmp/absent.svm
flag_case out_model "--save-model $tmp/no/m.model: the folder $tmp/no does not exist" \
  train --data "$absent" --save-model "$tmp/no/m.model"
flag_case out_model_dir "--save-model $tmp: is a directory, not a file name" train --data "$absent" --save-model "$tmp"
flag_case out_profile "--profile $tmp/p.xlsx: name it .csv or .jsonl" train --data "$absent" --profile "$tmp/p.xlsx"
flag_case out_profile_folder "--profile $tmp/cfg_rows.svm/p.csv: the folder $tmp/cfg_rows.svm is not a directory" \
  train --data "$absent" --profile "$tmp/cfg_rows.svm/p.csv"
flag_case out_checkpoint "--checkpoint $tmp/cfg_rows.svm/ck: $tmp/cfg_rows.svm is not a directory" \
  train --data "$absent" --checkpoint "$tmp/cfg_rows.svm/ck"
flag_case out_predict "--out $tmp/no/p.txt: the folder $tmp/no does not exist" \
  predict --model "$tmp/absent.model" --data "$absent" --out "$tmp/no/p.txt"
flag_case out_convert "--out $tmp/no/c.bin: the folder $tmp/no does not exist" \
  convert --data "$absent" --out "$tmp/no/c.bin"
[[ -z $(find "$tmp" -name '.mpisgd-probe-*') ]] || fail "a probe file was left behind"
pass
# A --checkpoint DIR that does not exist yet is made by the run, below a folder that does.
"$RUN" -np 2 "$MPISGD" train --data "$tmp/cfg_rows.svm" --epochs 1 --checkpoint "$tmp/new/ck" >"$tmp/ck_new.out" 2>&1 ||
  { cat "$tmp/ck_new.out"; fail "a new --checkpoint directory"; }
compgen -G "$tmp/new/ck/epoch-*.ckpt" >/dev/null || fail "no checkpoint written into the new directory"
pass
done_checks
