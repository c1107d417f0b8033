#!/usr/bin/env bash
# pingpong_bench, which the simulated platforms are calibrated with: one row per size, with
# a time, at even and odd rank counts (an odd last rank has no partner and waits), and bad
# arguments refused by name. How the times compare is left to the benchmark's reader: on
# a busy machine a descheduled rank can make any size's median the longest.
source "$(dirname "$0")/lib.bash"

BENCH=$BUILD/pingpong_bench
sizes=8,65536,4194304
for np in 2 3; do
  timeout "$HANG" "$RUN" -np "$np" "$BENCH" --sizes "$sizes" --reps 5 --csv "$tmp/p$np.csv" >"$tmp/p$np.out"
  awk -F, -v np="$np" -v sizes="$sizes" '
    BEGIN { split(sizes, want, ",") }
    NR == 1 { next }
    { n = NR - 1
      if ($1 != np) { print "ranks column " $1 ", ran " np; exit 1 }
      if ($2 != want[n]) { print "row " n " is " $2 " bytes, asked " want[n]; exit 1 }
      if (!($3 > 0)) { print "size " $2 ": one-way time " $3; exit 1 } }
    END { if (n != 3) { print n " rows, expected 3"; exit 1 } }' "$tmp/p$np.csv" \
    || fail "pingpong_bench at P = $np"
  pass
done

timeout "$HANG" "$RUN" -np 2 "$BENCH" --sizes 1024,8 >"$tmp/order.out" 2>&1 && fail "unsorted --sizes accepted"
expect_contains "$tmp/order.out" "--sizes must be ascending" "unsorted --sizes"
timeout "$HANG" "$RUN" -np 1 "$BENCH" >"$tmp/one.out" 2>&1 && fail "one rank accepted"
expect_contains "$tmp/one.out" "needs at least 2 ranks" "P = 1"
done_checks
