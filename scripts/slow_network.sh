#!/usr/bin/env bash
# Run an mpirun command over an emulated commodity network on this one machine.
#
#   scripts/slow_network.sh [--mode shared|per-rank] [--rate 1gbit] [--] MPIRUN-ARGS...
#   e.g. scripts/slow_network.sh --mode per-rank --rate 1gbit -np 4 build/allreduce_bench --dim 3200000
#
# shared:   one network namespace whose loopback is capped by a tbf qdisc; every rank runs
#           in it and Open MPI is forced onto TCP over that loopback, so all ranks share one
#           cap (like P processes behind one NIC).
# per-rank: one namespace per rank, each with a veth pair into a bridge that lives in a
#           private "hub" namespace, capped in both directions (tbf on each end's egress);
#           one Open MPI daemon per namespace, launched through a fake ssh that enters the
#           namespace. Closer to one NIC per node. The host's own network is never touched.
#
# Only bandwidth is emulated: latency needs the netem qdisc, which this kernel may lack
# (checked at run time). Needs root and iproute2 (ip, tc). Everything created (namespaces,
# veths, bridge, qdiscs, temp files) is removed on exit, also when the command fails or the
# script is interrupted; the exit status is the command's.
set -euo pipefail

usage() { sed -n '2,5s/^# \{0,1\}//p' "$0" >&2; exit 2; }
die() { echo "slow_network.sh: $*" >&2; exit 2; }

mode=shared rate=1gbit
while [[ $# -gt 0 ]]; do
  case $1 in
    --mode) mode=${2:?--mode needs a value}; shift 2 ;;
    --rate) rate=${2:?--rate needs a value}; shift 2 ;;
    --mode=*) mode=${1#*=}; shift ;;
    --rate=*) rate=${1#*=}; shift ;;
    -h|--help) usage ;;
    --) shift; break ;;
    *) break ;;
  esac
done
[[ $# -gt 0 ]] || usage
[[ $mode == shared || $mode == per-rank ]] || die "--mode must be shared or per-rank, not '$mode'"
[[ $(id -u) -eq 0 ]] || die "needs root (network namespaces and tc); try sudo"
if ! command -v ip >/dev/null || ! command -v tc >/dev/null; then die "needs ip and tc (apt-get install iproute2)"; fi
mpirun --version 2>&1 | grep -q "Open MPI" || die "needs Open MPI's mpirun (the MCA flags are Open MPI's)"

# tbf's bucket (burst) sets how close to the cap TCP gets. It must hold the biggest packet:
# loopback's MTU is 64 KiB and tbf drops, rather than splits, a bigger one, so a 64 KiB
# burst stalls the shared mode outright. It must also cover what the link sends between
# timer ticks: at 1gbit a 125 KB burst gave 111 MiB/s on veth, 31 KB gave 60, 500 KB gave
# the full 117-119. Too big lets a pause be made up later at line rate (overshoot).
# Hence 4 ms of line rate, at least 128 KiB.
rate=${rate,,}
[[ $rate =~ ^([0-9]+)(bit|kbit|mbit|gbit)$ ]] || die "--rate must look like 100mbit or 1gbit, not '$rate'"
case ${BASH_REMATCH[2]} in bit) scale=1 ;; kbit) scale=1000 ;; mbit) scale=1000000 ;; gbit) scale=1000000000 ;; esac
num=$((10#${BASH_REMATCH[1]}))
(( num > 0 )) || die "--rate must be positive"
burst=$(( num * scale / 8 / 250 ))
(( burst < 131072 )) && burst=131072
# latency bounds the queue; generous so TCP sees a deep switch buffer, not drops.
tbf=(tbf rate "$rate" burst "$burst" latency 50ms)

id=sn$$            # namespace names carry the pid so two runs never collide
made_ns=() tmp="" mpirun_pid="" running=""
cleanup() {
  local ns sig pids
  trap - EXIT INT TERM
  if [[ -n $running ]]; then
    # After a Ctrl-C mpirun has the SIGINT too and is already stopping its ranks; a second
    # signal makes it quit on the spot. So a short grace, then TERM, then the sweep below.
    for _ in {1..10}; do kill -0 "$mpirun_pid" 2>/dev/null || break; sleep 0.1; done
    kill -TERM "$mpirun_pid" 2>/dev/null || true
    for _ in {1..30}; do kill -0 "$mpirun_pid" 2>/dev/null || break; sleep 0.1; done
  fi
  # A namespace lives on while any process is inside it, so end stragglers (ours: orteds,
  # ranks) before deleting; deleting it then destroys its veths, bridge and qdiscs.
  for sig in TERM KILL; do
    pids=()
    for ns in "${made_ns[@]}"; do mapfile -t -O "${#pids[@]}" pids < <(ip netns pids "$ns" 2>/dev/null); done
    [[ ${#pids[@]} -eq 0 ]] && break
    kill "-$sig" "${pids[@]}" 2>/dev/null || true
    [[ $sig == TERM ]] && sleep 0.5
  done
  for ns in "${made_ns[@]}"; do ip netns del "$ns" 2>/dev/null || true; done
  [[ -n $tmp ]] && rm -rf "$tmp"
  # An mpirun stopped by a signal may leave its session directory (Open MPI 4 layout).
  [[ -n $mpirun_pid ]] && rm -rf "${TMPDIR:-/tmp}"/ompi.*."$(id -u)/pid.$mpirun_pid"
  return 0
}
trap cleanup EXIT
trap 'exit 130' INT    # exit runs the EXIT trap, which cleans up
trap 'exit 143' TERM

new_ns() {
  ip netns add "$1" || die "cannot create a network namespace (in a container: needs CAP_SYS_ADMIN)"
  made_ns+=("$1")
  ip -n "$1" link set lo up
}
# Latency would need netem; say whether the kernel even has it (probe on a namespace's lo).
netem_note() {
  if tc -n "$1" qdisc add dev lo root netem delay 1ms 2>/dev/null; then
    tc -n "$1" qdisc del dev lo root
    echo "no latency added (netem exists, but only bandwidth is shaped)"
  else
    echo "no latency added: this kernel has no netem qdisc"
  fi
}

# Root is required anyway, so --allow-run-as-root always; the rest as in mpirun_local.sh.
mpi=(--allow-run-as-root --oversubscribe --mca mpi_yield_when_idle 1 --bind-to none
     --mca btl "tcp,self")

if [[ $mode == shared ]]; then
  ns=${id}
  new_ns "$ns"
  latency_note=$(netem_note "$ns")
  tc -n "$ns" qdisc add dev lo root "${tbf[@]}"
  mpi+=(--mca btl_tcp_if_include lo --mca oob_tcp_if_include lo)
  echo "slow_network.sh: shared mode, all ranks share one $rate loopback in netns $ns; $latency_note" >&2
else
  # Rank count = mpirun's -np/-n value: one namespace (one "node") per rank. The first
  # one wins, as mpirun's options come before the program and its own arguments.
  np="" prev=""
  for a in "$@"; do
    [[ -n $np ]] && break
    case $prev in -np|--np|-n|--n) np=$a ;; esac
    case $a in -np=*|--np=*) np=${a#*=} ;; esac
    prev=$a
  done
  [[ $np =~ ^[0-9]+$ && $np -ge 1 && $np -le 250 ]] || die "per-rank mode needs -np N (1..250) among the mpirun arguments"
  subnet=10.201.0 hub=${id}hub
  tmp=$(mktemp -d -t "slow_network.$$.XXXXXX")
  new_ns "$hub"
  latency_note=$(netem_note "$hub")
  ip -n "$hub" link add br0 type bridge
  ip -n "$hub" link set br0 up
  for ((i = 0; i < np; i++)); do
    ns=${id}n$i
    new_ns "$ns"
    # Created inside the hub namespace, so the names cannot clash with the host's links.
    ip -n "$hub" link add "v$i" type veth peer name eth0 netns "$ns"
    ip -n "$hub" link set "v$i" master br0 up
    ip -n "$ns" addr add "$subnet.$((i + 1))/24" dev eth0
    ip -n "$ns" link set eth0 up
    tc -n "$ns" qdisc add dev eth0 root "${tbf[@]}"     # rank -> switch
    tc -n "$hub" qdisc add dev "v$i" root "${tbf[@]}"   # switch -> rank
    echo "$subnet.$((i + 1)) slots=1" >>"$tmp/hosts"
  done
  # Open MPI starts its daemons with "AGENT HOST COMMAND..."; this stand-in for ssh runs
  # COMMAND inside the namespace that owns HOST, the way ssh would run it on that node.
  # Each daemon gets its own session directory: the "nodes" share one hostname and /tmp, and
  # daemons of one job would otherwise share a session directory and race to delete it.
  cat >"$tmp/agent" <<EOF
#!/bin/sh
while [ "\${1#-}" != "\$1" ]; do shift; done   # ssh-style options, if any
i=\$(( \${1##*.} - 1 )); shift
mkdir -p "$tmp/n\$i"
exec ip netns exec "${id}n\$i" env OMPI_MCA_orte_tmpdir_base="$tmp/n\$i" sh -c "\$*"
EOF
  chmod +x "$tmp/agent"
  mpi+=(--hostfile "$tmp/hosts" --map-by node --mca plm_rsh_agent "$tmp/agent"
        --mca btl_tcp_if_include "$subnet.0/24" --mca oob_tcp_if_include "$subnet.0/24")
  ns=${id}n0   # mpirun runs in rank 0's namespace, which can reach every other one
  echo "slow_network.sh: per-rank mode, $np namespaces, each rank's link capped at $rate each way; $latency_note" >&2
fi

# In the background so a signal to this script reaches the trap at once instead of
# waiting for mpirun to finish.
ip netns exec "$ns" mpirun "${mpi[@]}" "$@" &
mpirun_pid=$! running=1
rc=0
wait "$mpirun_pid" || rc=$?
running=""
exit "$rc"
