#!/usr/bin/env bash
# Runs the whole `make test` N times in a row, to find tests that fail at random: a flaky
# test blocks every landing at random, and one run in ten is enough to block many.
#
#   scripts/repeat_tests.sh N [MAKE ARGUMENTS...]     e.g. scripts/repeat_tests.sh 10 MPI=mpich
#
# Each run's whole output goes to out/repeat/run-K.log, and a line per run (its closing
# "N passed, N failed" and its time) to the terminal; at the end, each suite that failed,
# how often, and the output it failed with (tests/run_all.sh's FAIL block of each run).
# A run with no closing line (the build failed) stops the repeat.
# Exits non-zero if any run failed. Not part of .ci/run, whose time budget has no room
# for it.
set -uo pipefail
cd "$(dirname "$0")/.."

usage() { sed -n '2,12s/^# \{0,1\}//p' "$0" >&2; exit 2; }
[[ $# -ge 1 && $1 =~ ^[1-9][0-9]*$ ]] || usage
runs=$1
shift
logs=out/repeat
mkdir -p "$logs"
rm -f "$logs"/run-*.log

failed_runs=0
for ((k = 1; k <= runs; ++k)); do
  log=$logs/run-$k.log
  start=$SECONDS
  make test "$@" >"$log" 2>&1
  rc=$?
  closing=$(grep -aE '^tests: [0-9]+ passed, [0-9]+ failed' "$log" | tail -1)
  line=$(printf 'run %2d: %-32s %4d s' "$k" "${closing:-no closing line (rc $rc)}" $((SECONDS - start)))
  echo "$line"
  [[ $rc -eq 0 ]] || failed_runs=$((failed_runs + 1))
  # No closing line: the build or the install failed, which no further run will mend.
  [[ -n $closing ]] || { tail -n 30 "$log"; echo "repeat_tests.sh: stopped after run $k" >&2; exit 2; }
done

echo
echo "== $((runs - failed_runs)) of $runs runs passed ($*)"
[[ $failed_runs -eq 0 ]] && exit 0

# A failed suite is a "  FAIL  name  Ns" line followed by its output indented by 8.
echo "== failed suites (times failed, suite)"
for log in "$logs"/run-*.log; do
  awk '/^  FAIL  / { name = $2; for (i = 3; i < NF; ++i) name = name " " $i; print name }' "$log"
done | sort | uniq -c | sort -rn
echo
echo "== their output"
for log in "$logs"/run-*.log; do
  awk -v run="$(basename "$log" .log)" '
    /^  FAIL  / { printing = 1; print "---- " run ":" substr($0, 3); next }
    printing && /^        / { print; next }
    { printing = 0 }
  ' "$log"
done
exit 1
