#!/usr/bin/env bash
# A rank that stops without dying (SIGSTOP) ends the job within --comm-timeout plus the
# watchdog's grace, non-zero, with one message naming it; a rank killed mid-epoch
# (SIGKILL) ends the job, every rank gone. Neither leaves a model or profile behind,
# final or temporary.
# Where the surviving ranks wait when the signal lands (a step's exchange, the epoch's
# end) is the scheduler's choice, so the message is checked for the stalled rank and for
# every survivor in one of the places it can be, not for one place.
source "$(dirname "$0")/lib.bash"
GEN=$BUILD/gen_data
LIMIT=3                    # --comm-timeout
MARGIN=30                  # grace (1.5 s) + mpirun's teardown on a machine whose cores are all busy
START_LIMIT=180            # seconds for the job to finish its first epoch on a loaded machine
"$GEN" --kind url --rows 40000 --features 2000 --nnz 20 --threads 1 --out "$tmp/data.svm" >/dev/null

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
  # Signalled once the first epoch is done, so the ranks are in the loop: in the second
  # epoch's steps or its end.
  local start=$SECONDS
  while ((SECONDS - start <= START_LIMIT)) && kill -0 "$job" 2>/dev/null; do
    grep -qsE '^ +1 ' "$tmp/$name.out" && pid=$(rank_pid "$name" "$rank") && [[ -n $pid ]] && break
    sleep 0.1
  done
  [[ -n $pid ]] || { kill "$job"; cat "$tmp/$name.out"; fail "$name: no rank $rank found in the epoch loop"; }
  start=$SECONDS
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

# The stall report's groups ("rank 1 did not answer ...; ranks 0, 2 waiting in X for ...")
# as lines "RANK STATE", STATE being "silent", "serving" or the place waited in.
report_states() {  # output-file
  grep -m1 -oE 'no communication progress for [^(]*\(--comm-timeout\): .*' "$1" | sed 's/^[^:]*: //' |
    tr ';' '\n' | sed -E 's/^ +//' | while read -r part; do
      local ranks state
      ranks=$(sed -nE 's/^ranks? ([0-9, ]+) .*/\1/p' <<<"$part")
      case $part in
        *" did not answer"*) state=silent ;;
        *" serving, waiting for requests"*) state=serving ;;
        *" waiting in "*) state=$(sed -E 's/.* waiting in (.*) for up to .*/\1/' <<<"$part") ;;
        *) continue ;;
      esac
      for r in ${ranks//,/ }; do echo "$r $state"; done
    done
}

expect_stall_report() {  # name stalled-rank "rank:place|place ..." ...
  local name=$1 stalled=$2 states; shift 2
  expect_contains "$tmp/$name.out" "no communication progress for $LIMIT s (--comm-timeout): " "$name"
  states=$(report_states "$tmp/$name.out")
  grep -qx "$stalled silent" <<<"$states" || { cat "$tmp/$name.out"; fail "$name: rank $stalled not named as stalled"; }
  pass
  local survivor
  for survivor in "$@"; do
    local r=${survivor%%:*} places=${survivor#*:} state
    state=$(sed -n "s/^$r //p" <<<"$states")
    [[ -n $state && "|$places|" == *"|$state|"* ]] ||
      { cat "$tmp/$name.out"; fail "$name: rank $r reported as '${state:-absent}', expected one of: $places"; }
    pass
  done
}

signal_case stop STOP 1
expect_contains "$tmp/stop.out" "no communication progress for $LIMIT s (--comm-timeout): rank 1 did not answer" "stop"
expect_stall_report stop 1 "0:a strategy exchange|the epoch-end summary" "2:a strategy exchange|the epoch-end summary"
# Ranks 0 and 1 train, rank 2 serves.
signal_case stop_ps STOP 1 --strategy ps-sync --servers 1
expect_stall_report stop_ps 1 "0:a parameter-server pull|a parameter-server push|the epoch-end summary" \
  "2:serving|a worker's message|a reply to a worker|the epoch-end summary"
signal_case kill KILL 1
signal_case kill_root KILL 0
done_checks
