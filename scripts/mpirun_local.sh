#!/usr/bin/env bash
# mpirun on this one machine, with the flags a laptop, a CI box or a container needs.
# MPIRUN names the launcher (default `mpirun`; `make MPI=mpich` sets `mpirun.mpich`).
# Open MPI refuses root without --allow-run-as-root, refuses more ranks than cores without
# --oversubscribe, and busy-polls idle ranks (crawling when oversubscribed) unless told to
# yield. MPICH's Hydra needs none of these flags and knows none of them; with more ranks
# than cores its ranks busy-poll, which no setting of Debian's MPICH 4.0.2 (ch4:ucx)
# stops (docs/design.md, "MPI portability"). Usage: scripts/mpirun_local.sh -np 4 CMD...
set -euo pipefail
launcher=${MPIRUN:-mpirun}
if "$launcher" --version 2>&1 | grep -q "Open MPI"; then
  flags=(--oversubscribe --mca mpi_yield_when_idle 1 --bind-to none)
  [[ $(id -u) -eq 0 ]] && flags+=(--allow-run-as-root)
  exec "$launcher" "${flags[@]}" "$@"
fi
exec "$launcher" "$@"
