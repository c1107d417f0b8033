#!/usr/bin/env bash
# mpirun on this one machine, with the flags a laptop, a CI box or a container needs:
# Open MPI refuses root without --allow-run-as-root, refuses more ranks than cores without
# --oversubscribe, and busy-polls idle ranks (crawling when oversubscribed) unless told to
# yield. MPICH's mpiexec needs none of these. Usage: scripts/mpirun_local.sh -np 4 CMD...
set -euo pipefail
if mpirun --version 2>&1 | grep -q "Open MPI"; then
  flags=(--oversubscribe --mca mpi_yield_when_idle 1 --bind-to none)
  [[ $(id -u) -eq 0 ]] && flags+=(--allow-run-as-root)
  exec mpirun "${flags[@]}" "$@"
fi
exec mpirun "$@"
