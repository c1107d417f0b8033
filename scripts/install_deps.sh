#!/usr/bin/env bash
# Installs every Debian package mpisgd needs, and nothing when they are all there,
# so `make` can call it on every run. `--bench` adds what the benchmarks compare against
# and measure with (scikit-learn, GNU time, Fashion-MNIST for scripts/fashion_mnist.py)
# and iproute2 for scripts/slow_network.sh; `--mpich` adds Debian's MPICH (`make MPI=mpich`);
# `--fuzz` adds clang 14 and its runtime, which holds libFuzzer (`make fuzz`); `--sim` adds
# SimGrid, whose SMPI runs the ranks on a simulated cluster (`make SIM=1`); `--slurm` adds
# a one-node Slurm and MUNGE, its authentication (`make test-slurm`).
set -euo pipefail

packages=(
  g++ make pkg-config
  openmpi-bin libopenmpi-dev openssh-client
  libcli11-dev libspdlog-dev libfmt-dev catch2
  liblinear-tools
  python3 python3-numpy python3-matplotlib
)
for option in "$@"; do
  case $option in
    --bench) packages+=(python3-sklearn time iproute2 dataset-fashion-mnist) ;;
    --mpich) packages+=(mpich libmpich-dev) ;;
    --fuzz) packages+=(clang-14 libclang-rt-14-dev) ;;
    --sim) packages+=(libsimgrid-dev) ;;
    --slurm) packages+=(slurmctld slurmd slurm-client munge) ;;
    *) echo "install_deps: unknown option $option (known: --bench, --mpich, --fuzz, --sim, --slurm)" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "install_deps: installing ${missing[*]}"
sudo=""
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "install_deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
