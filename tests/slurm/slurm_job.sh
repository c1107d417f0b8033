#!/usr/bin/env bash
# scripts/slurm_train.sh as a Slurm batch job: a one-node cluster from Debian's packages
# (MUNGE, slurmctld, slurmd) starts here, runs the script at 2 tasks through sbatch, and
# the test checks that both ranks trained and that the model, the profile and its plot
# came out. The daemons run from a private folder, with their own MUNGE key, socket and
# ports, so a Slurm or MUNGE already on the machine is neither used nor touched; all stop
# on exit. Where they cannot start (not root, packages missing, no cgroup file system, a
# daemon that exits or a node that never comes up) it prints SKIPPED and why, and exits
# 0; once the node is idle, every failure is the job's and fails the test.
# Run by `make test-slurm`, which installs the packages first.
source "$(dirname "$0")/../e2e/lib.bash"

skip() { echo "SKIPPED: $*"; exit 0; }
# The last errors a daemon wrote, to its log file or, before it had one, to stderr: the
# final one is often a bare "initialization failed", the cause a line or two before it.
last_error() { cat "$tmp/log/$1".* 2>/dev/null | grep -aiE 'error|fatal' | tail -n 3 | sed 's/^\[[^]]*\] //' | paste -sd '|' - || true; }
alive() { [[ -e /proc/$1 && $(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null) != Z ]]; }

[[ $(id -u) -eq 0 ]] || skip "slurmd must run as root, to start job steps as their user; this is uid $(id -u)"
for cmd in munged munge slurmctld slurmd sbatch sinfo squeue scancel srun; do
  command -v "$cmd" >/dev/null || skip "$cmd is not installed (scripts/install_deps.sh --slurm)"
done

# Started here and stopped in this order's reverse, each in a session of its own: a
# signal to the test's process group (Ctrl-C, a timeout) must not stop slurmd under a
# running job, whose steps would then outlive it; the EXIT trap cancels the job first.
daemons=()
sbatch_pid=""
# The job's id, chosen past every out/slurm-ID.* already there (from a real cluster's
# jobs, say), since the job writes its profile and plot there and the test removes them.
job=1
while compgen -G "out/slurm-$job.*" >/dev/null; do job=$((job + 1)); done
made_out=$([[ -d out ]] || echo 1)  # the job script makes it; removed again if empty
stop() {  # pid: TERM, then KILL if it is still there after a guard's wait
  kill -TERM "$1" 2>/dev/null || return 0
  local i
  for ((i = 0; i < 30; ++i)); do
    alive "$1" || break
    sleep 1
  done
  kill -KILL "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}
cleanup() {
  local i
  if [[ -n $sbatch_pid ]]; then
    kill "$sbatch_pid" 2>/dev/null || true
    scancel --partition mpisgd 2>/dev/null || true
    for ((i = 0; i < 30; ++i)); do
      [[ -z $(squeue -h -o %i 2>/dev/null) ]] && break
      sleep 1
    done
  fi
  for ((i = ${#daemons[@]} - 1; i >= 0; --i)); do stop "${daemons[i]}"; done
  rm -f "out/slurm-$job".*
  [[ -z $made_out ]] || rmdir out 2>/dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

conf=$tmp/conf
mkdir -p "$conf" "$tmp/state" "$tmp/spool" "$tmp/log"
# munged serves its socket only from a folder every user may enter.
chmod 711 "$tmp"
dd if=/dev/urandom of="$conf/munge.key" bs=1024 count=1 status=none
chmod 400 "$conf/munge.key"
socket=$tmp/munge.socket
setsid munged --foreground --key-file="$conf/munge.key" --socket="$socket" --pid-file="$tmp/munged.pid" \
  --log-file="$tmp/log/munged.log" --seed-file="$tmp/state/munged.seed" 2>"$tmp/log/munged.err" &
munged_pid=$!
daemons+=("$munged_pid")
for ((i = 0; i < 30; ++i)); do
  munge -n -S "$socket" >/dev/null 2>&1 && break
  alive "$munged_pid" || break
  sleep 1
done
munge -n -S "$socket" >/dev/null 2>&1 || skip "munged did not start: $(last_error munged)"

# Free ports for the two daemons, chosen by the kernel.
read -r ctld_port slurmd_port < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*(x.getsockname()[1] for x in s))')
node=$(hostname -s)
# Addresses are 127.0.0.1, so no name needs to resolve. The daemons track processes by
# their parents and bind with sched_setaffinity (task/affinity, for --cpu-bind), so the
# job needs no cgroups; slurmd 22.05 still loads a cgroup plugin at start, and without
# systemd (a container) may set up cgroup v2 itself. MpiDefault is Slurm's own default,
# so the ranks find each other only because slurm_train.sh asks srun for PMIx.
cat >"$conf/slurm.conf" <<EOF
ClusterName=mpisgdtest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$socket
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
FirstJobId=$job
NodeName=$node NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=500 State=UNKNOWN
PartitionName=mpisgd Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
cat >"$conf/cgroup.conf" <<EOF
CgroupPlugin=autodetect
IgnoreSystemdOnFailure=yes
EOF
export SLURM_CONF=$conf/slurm.conf

setsid slurmctld -D -f "$SLURM_CONF" 2>"$tmp/log/slurmctld.err" &
ctld_pid=$!
daemons+=("$ctld_pid")
setsid slurmd -D -f "$SLURM_CONF" -N "$node" 2>"$tmp/log/slurmd.err" &
slurmd_pid=$!
daemons+=("$slurmd_pid")
state=""
for ((i = 0; i < 60; ++i)); do
  alive "$ctld_pid" || skip "slurmctld exited at start: $(last_error slurmctld)"
  alive "$slurmd_pid" || skip "slurmd exited at start: $(last_error slurmd)"
  state=$(sinfo -h -n "$node" -o %T 2>/dev/null || true)
  [[ $state == idle ]] && break
  sleep 1
done
[[ $state == idle ]] || skip "node $node not idle after 60 s (state '${state:-unknown}');" \
  "slurmctld: $(last_error slurmctld); slurmd: $(last_error slurmd)"
echo "slurm: node $node idle (slurmctld on port $ctld_port, slurmd on $slurmd_port)"

"$BUILD"/gen_data --kind url --rows 2000 --features 5000 --seed 1 --out "$tmp/train.svm" 2>/dev/null
"$BUILD"/gen_data --kind url --rows 500 --features 5000 --first-row 2000 --seed 1 --out "$tmp/test.svm" 2>/dev/null

start=$SECONDS
rc=0
# In the background, as bash runs a trap only once a foreground command ends, and timeout
# puts sbatch in a process group of its own, out of reach of a signal to the test's.
timeout "$HANG" sbatch --wait --nodes 1 --ntasks 2 --cpus-per-task 1 --chdir "$PWD" \
  --output "$tmp/job.log" scripts/slurm_train.sh --data "$tmp/train.svm" --test "$tmp/test.svm" \
  --epochs 2 --save-model "$tmp/slurm.model" >"$tmp/sbatch.out" 2>&1 &
sbatch_pid=$!
wait "$sbatch_pid" || rc=$?
echo "slurm: job $job ended with $rc after $((SECONDS - start)) s"
if [[ $rc -ne 0 ]]; then
  echo "---- sbatch:"; cat "$tmp/sbatch.out"
  echo "---- job log:"; cat "$tmp/job.log" 2>/dev/null || true
  echo "---- slurmd log:"; tail -n 20 "$tmp/log/slurmd.log"
  fail "the batch job (sbatch exit $rc)"
fi
pass
expect_contains "$tmp/job.log" "P=2 T=1" "both tasks are ranks of one job, one thread each"

[[ -s $tmp/slurm.model ]] || fail "the job wrote no model"
"$RUN" -np 1 "$MPISGD" predict --model "$tmp/slurm.model" --data "$tmp/test.svm" >"$tmp/predict.out" 2>&1 ||
  { cat "$tmp/predict.out"; fail "predict with the job's model"; }
expect_contains "$tmp/predict.out" "Accuracy = " "predict reports the model's accuracy"

[[ -s out/slurm-$job.csv ]] || fail "the job wrote no profile out/slurm-$job.csv"
python3 - "out/slurm-$job.csv" "out/slurm-$job.png" <<'PY' || fail "profile or plot of job $job"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 2, f"{len(rows)} epoch rows, expected 2"
for r in rows:
    assert r["ranks"] == "2" and r["threads"] == "1", r
with open(sys.argv[2], "rb") as f:
    assert f.read(8) == b"\x89PNG\r\n\x1a\n", f"{sys.argv[2]} is not a PNG"
PY
pass
done_checks
