#!/usr/bin/env bash
# Runs every test: unit tests, MPI tests under mpirun at several rank counts (powers of two
# and not), the collectives' tests at more rank counts, and the end-to-end scripts. Prints
# each suite's result and a closing "N passed, N failed" line over the suites; exits
# non-zero if any failed.
set -uo pipefail
cd "$(dirname "$0")/.."

BUILD=${BUILD:-build}  # the build to test: build-mpich, build-san, ... (see the Makefile)
if [[ -n "${SANITIZE:-}" ]]; then
  # The sanitizers slow everything several times: the MPI tests at 1 rank and at 3 (one
  # that folds, as no power of two does), and the script that feeds every kind of bad
  # input to the trainer.
  MPI_RANKS=${MPI_RANKS-"1 3"}
  COLLECTIVE_RANKS=${COLLECTIVE_RANKS-""}
  PS_RANKS=${PS_RANKS-""}
  E2E=${E2E-tests/e2e/cli_errors.sh}
fi
MPI_RANKS=${MPI_RANKS-"1 2 3 4 5"}
# The collectives' own tests also run at these rank counts, so that every collective is
# covered at P = 1..9 and 13 (folds of 1..5 extra ranks, a prime, group sizes that do
# and do not divide P).
COLLECTIVE_RANKS=${COLLECTIVE_RANKS-"6 7 8 9 13"}
# The parameter servers' tests also run at 6 ranks: 5 workers and 1 server, or 4 and 2.
PS_RANKS=${PS_RANKS-"6"}
E2E=${E2E-tests/e2e/*.sh}  # the end-to-end scripts to run; empty for none
# A Catch test spec for the MPI-test runs with more ranks than cores (e.g. "~[many-steps]",
# which leaves out the tests that train for hundreds of steps); empty for every test.
# `.ci/run` sets it for MPICH, whose ranks busy-poll there.
OVERSUBSCRIBED_TESTS=${OVERSUBSCRIBED_TESTS-""}
TIMEOUT=${TEST_TIMEOUT:-600}
# Under SANITIZE=1 builds: LeakSanitizer reports only our leaks, not the MPI library's own
# allocations (tests/lsan.supp), and UBSan findings fail the run. Ignored by other builds.
# Open MPI's plug-ins are built without frame pointers and unloaded before the report, so
# the fast unwinder records only the allocating frame, in no module any suppression can
# name; the full unwinder records the stack up to libmpi, which tests/lsan.supp names.
export ASAN_OPTIONS="fast_unwind_on_malloc=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
passed=0
failed=0

run() {
  local name=$1; shift
  local log="$logs/$(echo "$name" | tr -c 'a-zA-Z0-9' _).log"
  local start=$SECONDS
  if timeout "$TIMEOUT" "$@" >"$log" 2>&1; then
    passed=$((passed + 1))
    printf '  pass  %-40s %4ds  %s\n' "$name" $((SECONDS - start)) "$(grep -aE 'All tests passed|test cases:' "$log" | tail -1 | sed 's/\x1b\[[0-9;]*m//g')"
  else
    failed=$((failed + 1))
    printf '  FAIL  %-40s %4ds\n' "$name" $((SECONDS - start))
    tail -n 60 "$log" | sed 's/^/        /'
  fi
}

echo "== $BUILD under ${MPIRUN:-mpirun}: $("${MPIRUN:-mpirun}" --version 2>&1 | grep -m1 -oE 'Open MPI\)? [0-9.]+|Version: +[0-9.]+' | sed -E 's/\)//; s/^Version: +/Hydra (MPICH) /')"
echo "== layers (includes point down: docs/design.md#layers)"
run "layers" scripts/check_layers.sh
echo "== unit tests"
run "unit" "$BUILD"/unit_tests
echo "== fuzz corpus replay (fuzz/corpus)"
for replay in "$BUILD"/fuzz/*_replay; do
  target=$(basename "$replay" _replay)
  run "replay $target" "$replay" "fuzz/corpus/$target"
done
echo "== MPI tests (ranks: $MPI_RANKS)"
for np in $MPI_RANKS; do
  if [[ -n $OVERSUBSCRIBED_TESTS ]] && ((np > $(nproc))); then
    run "mpi -np $np $OVERSUBSCRIBED_TESTS" scripts/mpirun_local.sh -np "$np" "$BUILD"/mpi_tests "$OVERSUBSCRIBED_TESTS"
  else
    run "mpi -np $np" scripts/mpirun_local.sh -np "$np" "$BUILD"/mpi_tests
  fi
done
echo "== MPI collectives tests (ranks: $COLLECTIVE_RANKS)"
for np in $COLLECTIVE_RANKS; do
  run "mpi collectives -np $np" scripts/mpirun_local.sh -np "$np" "$BUILD"/mpi_tests "[collectives]"
done
echo "== MPI parameter-server tests (ranks: $PS_RANKS)"
for np in $PS_RANKS; do
  run "mpi ps -np $np" scripts/mpirun_local.sh -np "$np" "$BUILD"/mpi_tests "[ps]"
done
echo "== end-to-end"
for t in $E2E; do
  [[ -e "$t" ]] || continue
  run "e2e $(basename "$t" .sh)" bash "$t"
done

echo "tests: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
