#!/usr/bin/env bash
# Runs an MPI program of the SIM=1 build (`make SIM=1`, into build-sim/) on a simulated
# cluster: SimGrid's smpirun starts every rank in this one process, times each rank's
# compute by the CPU time it takes here and each message on the platform's links.
#
#   scripts/simulate.sh --platform NAME -np P [--host-speed F|node] -- PROGRAM [ARGS...]
#   scripts/simulate.sh --calibrate [--build DIR]
#   e.g. scripts/simulate.sh --platform gbe -np 16 -- build-sim/mpisgd train --data d.svm
#
# NAME is a file of scripts/platforms/ (gbe: commodity 1 Gbit/s Ethernet). Its hosts are
# taken in order, one rank each. Speeds are in training work: 1 f is one stored value of
# the rows, taken through a training step (a node of every platform here does 150 Mf).
# A rank's compute time here becomes host speed / node speed times as long on the
# platform, so the host speed is this machine's rate at that work, which --calibrate
# measures (the trainer at P = 1 on a fixed URL-like set) and writes to DIR/host_speed
# (DIR: build-sim, where the programs are); a run reads it beside its program, and
# calibrates first where there is none. --host-speed F overrides it; --host-speed node
# makes this machine a node, so compute takes as long as it took here. The times
# MPI_Wtime gives, and so the profile's, are simulated; the wall time is not one of them.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

usage() { sed -n '2,19s/^# \{0,1\}//p' "$0" >&2; exit 2; }
die() { echo "simulate.sh: $*" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# The calibration: this machine's rate at the trainer's own work, in the platforms' unit.
# The trainer runs 8 epochs five times at P = 1 with compute untouched (--host-speed
# node) on 40,000 URL-like rows, bench_scaling.py's default set; the rate is the set's
# stored values over an epoch's compute time. CPU time drifts with the machine's state
# (this VM's has moved by 40% between days), so recalibrate before a sweep whose figures
# go beside earlier ones.
calibrate() {
  local build=$1 dir runs=5 epochs=8
  for program in mpisgd gen_data; do
    [[ -x $build/$program ]] || die "--calibrate needs $build/$program: build it with 'make SIM=1'"
  done
  dir=$tmp/calibration
  mkdir "$dir"
  "$0" --platform gbe -np 1 --host-speed node -- "$build/gen_data" --kind url --rows 40000 --seed 11 --threads 1 \
    --out "$dir/rows.svm" >"$dir/log" 2>&1 || { cat "$dir/log" >&2; die "--calibrate: gen_data failed"; }
  local values
  values=$(awk '{ n += NF - 1 } END { print n }' "$dir/rows.svm")
  for ((run = 1; run <= runs; ++run)); do
    "$0" --platform gbe -np 1 --host-speed node -- "$build/mpisgd" train --data "$dir/rows.svm" \
      --epochs "$epochs" --no-early-stop --no-progress --seed "$run" --profile "$dir/profile$run.csv" \
      >"$dir/log" 2>&1 || { cat "$dir/log" >&2; die "--calibrate: the trainer failed"; }
  done
  # Each run's median epoch, then their median: this VM's CPU time also jumps by a third
  # for seconds at a time, which a run's median alone does not outvote.
  local medians seconds
  medians=$(for profile in "$dir"/profile*.csv; do
    awk -F, 'FNR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next } { print $col["compute_s_mean"] }' "$profile" |
      median
  done | sort -g)
  seconds=$(median <<<"$medians")
  awk -v s="$seconds" 'BEGIN { exit !(s > 0) }' || die "--calibrate: the profiles hold no compute time"
  {
    echo "# scripts/simulate.sh --calibrate, $(date -u +%Y-%m-%dT%H:%MZ) on $(hostname): $values stored values of"
    echo "# 40,000 URL-like rows an epoch; median epoch compute $seconds s (runs' medians $(head -1 <<<"$medians")-$(tail -1 <<<"$medians") s)"
    awk -v v="$values" -v s="$seconds" 'BEGIN { printf "host_speed=%.1fMf\n", v / s / 1e6 }'
  } >"$build/host_speed.tmp"
  mv "$build/host_speed.tmp" "$build/host_speed"
  echo "simulate.sh: $(sed -n 's/^host_speed=//p' "$build/host_speed") written to $build/host_speed"
}

# The host speed a run's program takes from its build's calibration, calibrating first
# where there is none.
calibrated_speed() {
  local build=$1 file=$1/host_speed line
  if [[ ! -f $file ]]; then
    echo "simulate.sh: no $file yet: calibrating this machine first (--calibrate)" >&2
    calibrate "$build" >&2
  fi
  line=$(grep -n -v '^#' "$file" | head -1)
  [[ ${line#*:} =~ ^host_speed=[0-9]+(\.[0-9]+)?[kMGT]?f$ ]] ||
    die "$file:${line%%:*}: expected host_speed=<number><k|M|G|T>f, found '${line#*:}' (rewrite it with --calibrate)"
  echo "${line#*host_speed=}"
}

platform="" np="" host_speed="" build=build-sim calibrating=""
while [[ $# -gt 0 ]]; do
  case $1 in
    --platform) platform=${2:-}; shift 2 ;;
    -np) np=${2:-}; shift 2 ;;
    --host-speed) host_speed=${2:-}; shift 2 ;;
    --calibrate) calibrating=1; shift ;;
    --build) build=${2:-}; shift 2 ;;
    --) shift; break ;;
    -h | --help) usage ;;
    *) die "unknown option '$1' (the program and its arguments follow --)" ;;
  esac
done
command -v smpirun >/dev/null || die "smpirun not found: run 'scripts/install_deps.sh --sim' (or make SIM=1)"
if [[ -n $calibrating ]]; then
  calibrate "$build"
  exit 0
fi
[[ -n $platform && -n $np && $# -ge 1 ]] || usage
[[ $np =~ ^[1-9][0-9]*$ ]] || die "-np '$np' is not a positive whole number"
xml=$here/platforms/$platform.xml
[[ -f $xml ]] || die "no platform '$platform' (known: $(cd "$here/platforms" && ls *.xml | sed 's/\.xml$//' | tr '\n' ' '))"
[[ -f $1 ]] || die "$1 not found: build it with 'make SIM=1'"
# The platform's <cluster> tags, one a line (each opens with its attributes on one line),
# and an attribute of one of them.
clusters() { grep -oE '<cluster [^>]*' "$xml"; }
attr() { sed -nE "s/.* $2=\"([^\"]*)\".*/\1/p" <<<"$1"; }

case $host_speed in
  "") host_speed=$(calibrated_speed "$(dirname "$1")") ;;
  node)
    host_speed=$(attr "$(clusters | head -1)" speed)
    [[ -n $host_speed ]] || die "$xml: its first <cluster> line has no speed for --host-speed node" ;;
esac

# A platform's hosts are its clusters' prefix + number + suffix, numbers from the radical.
mapfile -t hosts < <(clusters | while read -r tag; do
  prefix=$(attr "$tag" prefix) suffix=$(attr "$tag" suffix) radical=$(attr "$tag" radical)
  for part in ${radical//,/ }; do
    for ((i = ${part%-*}; i <= ${part#*-}; ++i)); do echo "$prefix$i$suffix"; done
  done
done)
[[ ${#hosts[@]} -ge $np ]] || die "platform '$platform' has ${#hosts[@]} hosts, fewer than -np $np"

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
