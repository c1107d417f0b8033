#!/usr/bin/env bash
# A rank that stops without dying (SIGSTOP) ends the job within --comm-timeout plus the
# watchdog's grace, non-zero, with one message naming it; a rank killed mid-epoch
# (SIGKILL) ends the job, every rank gone. Neither leaves a model or profile behind,
# final or temporary.
source "$(dirname "$0")/lib.bash"
GEN=$BUILD/gen_data
LIMIT=3                    # --comm-timeout
MARGIN=15                  # grace (1.5 s) + mpirun's teardown on a loaded machine
"$GEN" --kind url --rows 4000 --features 2000 --nnz 20 --threads 1 --out "$tmp/data.svm" >/dev/null

rank_pid() {  # job-tag rank: the pid of that rank of the job started with that tag
  local p
  for p in $(pgrep -f -- "--profile $tmp/$1.csv"); do
    if tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qxE "(OMPI_COMM_WORLD_RANK|PMI_RANK)=$2"; then
      echo "$p"
      return
    fi
  done
}

signal_case() {  # name signal rank [extra flags]
  local name=$1 sig=$2 rank=$3 pid="" rc=0; shift 3
  "$RUN" -np 3 "$MPISGD" train --data "$tmp/data.svm" --epochs 100000 --batch 8 --comm-timeout "$LIMIT" \
    --save-model "$tmp/$name.model" --profile "$tmp/$name.csv" "$@" >"$tmp/$name.out" 2>&1 &
  local job=$!
  # Mid-epoch: signalled once the first epochs are done, so the ranks are in the loop.
  for _ in $(seq 100); do
    grep -qE '^ +3 ' "$tmp/$name.out" && pid=$(rank_pid "$name" "$rank") && [[ -n $pid ]] && break
    sleep 0.1
  done
  [[ -n $pid ]] || { kill "$job"; cat "$tmp/$name.out"; fail "$name: no rank $rank found mid-epoch"; }
  local start=$SECONDS
  kill "-$sig" "$pid"
  while kill -0 "$job" 2>/dev/null && ((SECONDS - start <= LIMIT + MARGIN)); do sleep 0.2; done
  if kill -0 "$job" 2>/dev/null; then
    kill -KILL "$pid"
    wait "$job" || true
    cat "$tmp/$name.out"
    fail "$name: the job did not end within $((LIMIT + MARGIN)) s of SIG$sig"
  fi
  wait "$job" || rc=$?
  [[ $rc -ne 0 ]] || fail "$name: exit code 0"
  [[ -z $(pgrep -f -- "--profile $tmp/$name.csv") ]] || fail "$name: ranks still running after the job ended"
  for f in "$tmp/$name.model" "$tmp/$name.csv" "$tmp/$name.model.tmp" "$tmp/$name.csv.tmp"; do
    [[ ! -e $f ]] || fail "$name: left $f behind"
  done
  pass
}

signal_case stop STOP 1
expect_contains "$tmp/stop.out" "no communication progress for $LIMIT s (--comm-timeout): rank 1 did not answer" "stop"
expect_contains "$tmp/stop.out" "ranks 0, 2 waiting in a strategy exchange" "stop"
signal_case stop_ps STOP 1 --strategy ps-sync --servers 1
expect_contains "$tmp/stop_ps.out" "rank 1 did not answer" "stop_ps"
expect_contains "$tmp/stop_ps.out" "rank 0 waiting in a parameter-server pull" "stop_ps"
signal_case kill KILL 1
signal_case kill_root KILL 0
done_checks
