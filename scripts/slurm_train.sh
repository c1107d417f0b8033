#!/usr/bin/env bash
# Trains on a Slurm cluster: one MPI rank per node (or per socket), OpenMP threads on the
# rank's cores. Submit with sbatch, giving the job's shape there and mpisgd's flags here:
#
#   sbatch --nodes 16 --ntasks-per-node 1 --cpus-per-task 32 --time 1:00:00 \
#     scripts/slurm_train.sh --data data/url.train --test data/url.test --strategy sparse-auto
#
# The training file is converted once to a binary cache beside it (DATA.bin, skipped when
# it is newer than DATA), which every later run loads at page-cache speed. The profile
# goes to out/slurm-JOBID.csv and its plot to out/slurm-JOBID.png. Without Slurm (no
# SLURM_NTASKS) it runs the same on this machine with RANKS ranks (default 2) through
# scripts/mpirun_local.sh. `make test-slurm` runs it as a batch job on a one-node Slurm.
#SBATCH --job-name=mpisgd
#SBATCH --output=out/slurm-%j.log
set -euo pipefail
cd "${SLURM_SUBMIT_DIR:-$(dirname "$0")/..}"

args=("$@")
data=""
for ((i = 0; i < ${#args[@]}; ++i)); do
  [[ ${args[i]} == --data ]] && data=${args[i + 1]:-}
done
[[ -n $data ]] || { echo "slurm_train: give --data FILE (and any other mpisgd train flags)" >&2; exit 2; }

threads=${SLURM_CPUS_PER_TASK:-1}
export OMP_NUM_THREADS=$threads OMP_PROC_BIND=spread OMP_PLACES=cores
if [[ -n ${SLURM_NTASKS:-} ]]; then
  # srun places the ranks and binds each to its --cpus-per-task cores. Open MPI's ranks
  # learn their peers only through PMIx (Debian's 4.1 has no PMI-1 or PMI-2), which srun
  # serves only when asked, by --mpi=pmix or a cluster's MpiDefault; Slurm's own default,
  # none, starts P singletons that each fail in MPI_Init.
  launch=(srun --mpi=pmix --cpu-bind=cores)
  job=$SLURM_JOB_ID
else
  launch=(scripts/mpirun_local.sh -np "${RANKS:-2}")
  job=local-$$
fi

mkdir -p out
if [[ $data != *.bin ]]; then
  cache=$data.bin
  if [[ ! -e $cache || $data -nt $cache ]]; then
    "${launch[@]}" build/mpisgd convert --data "$data" --out "$cache"
  fi
  for ((i = 0; i < ${#args[@]}; ++i)); do
    [[ ${args[i]} == --data ]] && args[i + 1]=$cache
  done
fi

"${launch[@]}" build/mpisgd train "${args[@]}" --threads "$threads" --no-progress --profile "out/slurm-$job.csv"
scripts/plot_profile.py "out/slurm-$job.csv" -o "out/slurm-$job.png" || echo "slurm_train: no plot (matplotlib missing?)" >&2
