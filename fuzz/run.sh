#!/usr/bin/env bash
# Runs each libFuzzer target built in BUILD_DIR for SECONDS on its checked-in corpus
# (fuzz/corpus/<target>/, read only: new inputs go to BUILD_DIR/corpus/<target>/, crashes
# to BUILD_DIR/crashes/) and prints its last status line: executions, cov (edges) and ft
# (features). Exits non-zero if any target found a crash.
# Usage: fuzz/run.sh BUILD_DIR SECONDS TARGET...
set -uo pipefail
cd "$(dirname "$0")/.."
build=$1 seconds=$2
shift 2
status=0
for target in "$@"; do
  work="$build/corpus/$target"
  mkdir -p "$work" "$build/crashes"
  log="$build/$target.log"
  echo "== $target: ${seconds}s (log: $log)"
  # The first corpus folder is where libFuzzer writes; the checked-in one is only read.
  if ! "$build/$target" -max_total_time="$seconds" -print_final_stats=1 \
      -artifact_prefix="$build/crashes/$target-" "$work" "fuzz/corpus/$target" >"$log" 2>&1; then
    status=1
    echo "   CRASH: $(grep -m1 -E 'ERROR|runtime error|deadly signal' "$log")"
    ls "$build/crashes/$target-"* 2>/dev/null | sed 's/^/   input: /'
  fi
  grep -E '^#[0-9]+.*(DONE|pulse|NEW|REDUCE)' "$log" | tail -1 | sed 's/^/   /'
  grep -E 'stat::number_of_executed_units' "$log" | sed 's/^/   /'
done
exit $status
