#!/usr/bin/env bash
# pingpong_bench, which the simulated platforms are calibrated with: one row per size at
# even and odd rank counts (an odd last rank has no partner and waits), times that grow
# with the size, and bad arguments refused by name.
source "$(dirname "$0")/lib.bash"

BENCH=$BUILD/pingpong_bench
sizes=8,65536,4194304
for np in 2 3; do
  timeout "$HANG" "$RUN" -np "$np" "$BENCH" --sizes "$sizes" --reps 5 --csv "$tmp/p$np.csv" >"$tmp/p$np.out"
  # A 4 MiB message cannot cross in less time than an 8-byte one: it is half a million
  # times the bytes through the same link.
  awk -F, -v np="$np" '
    NR == 1 { next }
    { if ($1 != np) { print "ranks column " $1 ", ran " np; exit 1 }
      if (!($3 > 0)) { print "size " $2 ": one-way time " $3; exit 1 }
      t[NR - 1] = $3; n = NR - 1 }
    END { if (n != 3) { print n " rows, expected 3"; exit 1 }
          if (!(t[3] > t[1])) { print "4 MiB took " t[3] " s, 8 B " t[1] " s"; exit 1 } }' "$tmp/p$np.csv" \
    || fail "pingpong_bench at P = $np"
  pass
done

timeout "$HANG" "$RUN" -np 2 "$BENCH" --sizes 1024,8 >"$tmp/order.out" 2>&1 && fail "unsorted --sizes accepted"
expect_contains "$tmp/order.out" "--sizes must be ascending" "unsorted --sizes"
timeout "$HANG" "$RUN" -np 1 "$BENCH" >"$tmp/one.out" 2>&1 && fail "one rank accepted"
expect_contains "$tmp/one.out" "needs at least 2 ranks" "P = 1"
done_checks
