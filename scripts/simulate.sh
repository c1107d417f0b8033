#!/usr/bin/env bash
# Runs an MPI program of the SIM=1 build (`make SIM=1`, into build-sim/) on a simulated
# cluster: SimGrid's smpirun starts every rank in this one process, times each rank's
# compute by the CPU time it takes here and each message on the platform's links.
#
#   scripts/simulate.sh --platform NAME -np P [--host-speed F] -- PROGRAM [ARGS...]
#   e.g. scripts/simulate.sh --platform gbe -np 16 -- build-sim/mpisgd train --data d.svm
#
# NAME is a file of scripts/platforms/ (gbe: commodity 1 Gbit/s Ethernet). Its hosts are
# taken in order, one rank each. --host-speed is this machine's speed in the platform's
# units (default 1Gf, which every platform here uses for "a node like this machine", so
# compute takes as long as it took here). The times MPI_Wtime gives, and so the profile's,
# are simulated; the wall time of the simulation is not one of them.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

usage() { sed -n '2,14s/^# \{0,1\}//p' "$0" >&2; exit 2; }
die() { echo "simulate.sh: $*" >&2; exit 2; }

platform="" np="" host_speed=1Gf
while [[ $# -gt 0 ]]; do
  case $1 in
    --platform) platform=${2:-}; shift 2 ;;
    -np) np=${2:-}; shift 2 ;;
    --host-speed) host_speed=${2:-}; shift 2 ;;
    --) shift; break ;;
    -h | --help) usage ;;
    *) die "unknown option '$1' (the program and its arguments follow --)" ;;
  esac
done
[[ -n $platform && -n $np && $# -ge 1 ]] || usage
[[ $np =~ ^[1-9][0-9]*$ ]] || die "-np '$np' is not a positive whole number"
xml=$here/platforms/$platform.xml
[[ -f $xml ]] || die "no platform '$platform' (known: $(cd "$here/platforms" && ls *.xml | sed 's/\.xml$//' | tr '\n' ' '))"
command -v smpirun >/dev/null || die "smpirun not found: run 'scripts/install_deps.sh --sim' (or make SIM=1)"
[[ -f $1 ]] || die "$1 not found: build it with 'make SIM=1'"

# A platform's hosts are its clusters' prefix + number + suffix, numbers from the radical.
mapfile -t hosts < <(grep -oE '<cluster [^>]*' "$xml" | while read -r tag; do
  attr() { sed -nE "s/.* $1=\"([^\"]*)\".*/\1/p" <<<"$tag"; }
  prefix=$(attr prefix) suffix=$(attr suffix) radical=$(attr radical)
  for part in ${radical//,/ }; do
    for ((i = ${part%-*}; i <= ${part#*-}; ++i)); do echo "$prefix$i$suffix"; done
  done
done)
[[ ${#hosts[@]} -ge $np ]] || die "platform '$platform' has ${#hosts[@]} hosts, fewer than -np $np"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%s\n' "${hosts[@]:0:np}" >"$tmp/hosts"

# Privatizing the program's globals by dlopen, SMPI loads a copy of the program per rank
# from smpirun's temporary folder, and every copy holds its disk space until the run ends:
# P = 1024 copies of the debug build (68 MB) filled 70 GB and the run aborted part way.
# Where the copies would not fit, the ranks load one stripped of its debug information
# (2 MB), the same code; where even those would not, say so before starting.
smpi_tmp=$(dirname "$(mktemp -u)")
free_bytes() { echo $(( $(df -P -k "$smpi_tmp" | awk 'NR == 2 { print $4 }') * 1024 )); }
need=$(( $(stat -c %s "$1") * np ))
if (( need > $(free_bytes) )); then
  command -v strip >/dev/null || die "$np copies of $1 need $(( need / 1000000 )) MB in $smpi_tmp, more than is free, and there is no strip(1) to make them smaller"
  stripped=$tmp/$(basename "$1")
  strip -o "$stripped" "$1"
  need=$(( $(stat -c %s "$stripped") * np ))
  (( need <= $(free_bytes) )) || die "$np copies of $1, even stripped, need $(( need / 1000000 )) MB in $smpi_tmp, which has $(( $(free_bytes) / 1000000 )) MB free (SMPI loads one per rank): set TMPDIR to a folder with room"
  echo "simulate.sh: $np copies of $1 would not fit in $smpi_tmp; the ranks load a copy stripped of debug information" >&2
  set -- "$stripped" "${@:2}"
fi

# Open MPI's collective choices for MPI_Allreduce and the rest (SMPI's default is one
# fixed algorithm each); the program's globals privatized per rank; SimGrid's own log
# kept to warnings, so the program's output reads as under mpirun. SimGrid 3.32's copy of
# Open MPI's pipelined MPI_Reduce sends to a parent that does not exist on one rank ("Actor
# pid=-1 is gone??"), so P = 1, which has no network to model, takes MPICH's choices.
selector=ompi
[[ $np -gt 1 ]] || selector=mpich
smpirun -np "$np" -platform "$xml" -hostfile "$tmp/hosts" \
  --cfg=smpi/host-speed:"$host_speed" --cfg=smpi/coll-selector:"$selector" --cfg=smpi/privatization:dlopen \
  --log=root.thres:warning --log=xbt_cfg.thres:warning "$@"
