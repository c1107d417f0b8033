#!/usr/bin/env bash
# The SIM=1 build under SimGrid (scripts/simulate.sh): a simulated run trains the very model
# a real one does, a run at P = 16 on the 1 GbE platform completes with a simulated profile
# and says that its exchanges take most of the epoch, a build's host speed is calibrated
# where it is missing and refused where malformed, and what a simulated rank cannot do is
# refused at start by name. `make test SIM=1` runs it;
# it needs build-sim/ and the real build's mpisgd and gen_data.
source "$(dirname "$0")/../e2e/lib.bash"

SIM=${BUILD:-build-sim}/mpisgd
REAL=build/mpisgd
SIMULATE=(scripts/simulate.sh --platform gbe)
build/gen_data --kind url --rows 4000 --features 20000 --seed 5 --out "$tmp/train.svm" 2>/dev/null
build/gen_data --kind url --rows 1000 --features 20000 --seed 5 --first-row 4000 --out "$tmp/test.svm" 2>/dev/null
flags=(--data "$tmp/train.svm" --test "$tmp/test.svm" --batch 32 --seed 3 --no-progress)

# Both builds send the same messages in the same order through the project's own
# collectives, so the sums, and the models, agree to the bit; only the clocks differ.
# sparse-auto may choose other algorithms on the simulated 1 GbE than on shared memory,
# and still writes the same bits: all its candidates sum in one order.
for strategy in ssar-split-ag dsar-split-ag sparse-auto topk-ag ps-sync; do
  timeout "$HANG" "$RUN" -np 4 "$REAL" train "${flags[@]}" --epochs 2 --strategy "$strategy" \
    --save-model "$tmp/real.model" >"$tmp/real.log" 2>&1 || { cat "$tmp/real.log"; fail "$strategy: real run"; }
  timeout "$HANG" "${SIMULATE[@]}" -np 4 -- "$SIM" train "${flags[@]}" --epochs 2 --strategy "$strategy" \
    --save-model "$tmp/sim.model" >"$tmp/sim.log" 2>&1 || { cat "$tmp/sim.log"; fail "$strategy: simulated run"; }
  cmp -s "$tmp/real.model" "$tmp/sim.model" || fail "$strategy: the simulated run's model differs from the real one's"
  pass
done

# One rank too (simulate.sh works around a SimGrid fault that only one rank meets).
timeout "$HANG" "$RUN" -np 1 "$REAL" train "${flags[@]}" --epochs 2 --save-model "$tmp/real1.model" \
  >"$tmp/real1.log" 2>&1 || { cat "$tmp/real1.log"; fail "P = 1: real run"; }
timeout "$HANG" "${SIMULATE[@]}" -np 1 -- "$SIM" train "${flags[@]}" --epochs 2 --save-model "$tmp/sim1.model" \
  >"$tmp/sim1.log" 2>&1 || { cat "$tmp/sim1.log"; fail "P = 1: simulated run"; }
cmp -s "$tmp/real1.model" "$tmp/sim1.model" || fail "P = 1: the simulated run's model differs from the real one's"
pass

# P = 16 on 1 GbE: every rank reads its share, the profile's times are simulated (an epoch
# of 125 steps of at least one 50 us hop each lasts more than 6 ms) and bytes are counted.
timeout "$HANG" "${SIMULATE[@]}" -np 16 -- "$SIM" train "${flags[@]}" --epochs 1 --strategy sparse-auto \
  --profile "$tmp/p16.csv" >"$tmp/p16.log" 2>&1 || { cat "$tmp/p16.log"; fail "P = 16: simulated run"; }
expect_contains "$tmp/p16.log" "16 ranks" "P = 16: the start-up line"
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
  { if ($col["comm_s_mean"] < 0.006 || $col["bytes_sent_mean"] <= 0 || $col["ranks"] != 16) { print; bad = 1 } }
  END { exit bad || NR != 2 }' "$tmp/p16.csv" || { cat "$tmp/p16.csv"; fail "P = 16: the profile's epoch"; }
pass
# Two rows of compute a rank against log2 16 hops of 50 us at every step: the exchanges
# are nearly the whole epoch, and the log names the strategy that exchanges less often.
expect_contains "$tmp/p16.log" "epoch 1: exchanges took" "P = 16: the hint after the first epoch"
expect_contains "$tmp/p16.log" "--strategy local-sgd" "P = 16: the hint's strategy"
! grep -q "exchanges took" "$tmp/sim1.log" || fail "P = 1: a hint about exchanges where there are none"
pass

# The host speed: a build without a calibration is calibrated at its first run, a malformed
# calibration is refused naming its file and line, and --calibrate writes it again.
mkdir "$tmp/cal"
cp "$SIM" "$(dirname "$SIM")/gen_data" "$tmp/cal/"
timeout "$HANG" "${SIMULATE[@]}" -np 1 -- "$tmp/cal/mpisgd" train "${flags[@]}" --epochs 1 >"$tmp/cal.log" 2>&1 ||
  { cat "$tmp/cal.log"; fail "the first run of an uncalibrated build"; }
expect_contains "$tmp/cal.log" "calibrating this machine first" "the first run of an uncalibrated build"
grep -Eq '^host_speed=[0-9]+\.[0-9]Mf$' "$tmp/cal/host_speed" || { cat "$tmp/cal/host_speed"; fail "the calibration written"; }
pass
printf '# measured by hand\nhost_speed=fast\n' >"$tmp/cal/host_speed"
if timeout "$HANG" "${SIMULATE[@]}" -np 1 -- "$tmp/cal/mpisgd" train "${flags[@]}" --epochs 1 >"$tmp/cal.log" 2>&1; then
  cat "$tmp/cal.log"; fail "a malformed calibration: ran, should be refused"
fi
expect_contains "$tmp/cal.log" "$tmp/cal/host_speed:2: expected host_speed=" "a malformed calibration"
timeout "$HANG" scripts/simulate.sh --calibrate --build "$tmp/cal" >"$tmp/cal.log" 2>&1 ||
  { cat "$tmp/cal.log"; fail "--calibrate"; }
grep -Eq '^host_speed=[0-9]+\.[0-9]Mf$' "$tmp/cal/host_speed" || { cat "$tmp/cal/host_speed"; fail "--calibrate's file"; }
pass

# Refused at start, naming the flag.
refused() {  # what message flags...
  local what=$1 message=$2; shift 2
  if timeout "$HANG" "${SIMULATE[@]}" -np 2 -- "$SIM" train "${flags[@]}" "$@" >"$tmp/refused.log" 2>&1; then
    cat "$tmp/refused.log"; fail "$what: ran, should be refused"
  fi
  expect_contains "$tmp/refused.log" "$message" "$what"
}
refused "--threads 2" "--threads 2: a simulated rank runs one thread" --threads 2
refused "--comm-timeout" "--comm-timeout: a simulated rank has no watchdog thread" --comm-timeout 30
refused "co-located servers" "MPI_THREAD_MULTIPLE" --strategy ps-sync --servers colocated
done_checks
