# Shared by the end-to-end scripts: a scratch dir removed on exit, and checks that print
# what was expected and what came instead.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
BUILD=${BUILD:-build}  # make test MPI=mpich runs these on build-mpich
MPISGD=$BUILD/mpisgd
RUN=scripts/mpirun_local.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
checks=0
# A guard against a hang, not a speed limit: on a machine whose cores are all busy a run
# takes many times what it takes alone.
HANG=300

pass() { checks=$((checks + 1)); }
fail() { echo "FAILED: $*" >&2; exit 1; }
expect_contains() {  # file pattern what
  grep -qF -- "$2" "$1" || { echo "---- $1:"; cat "$1"; fail "$3: expected to find '$2'"; }
  pass
}
done_checks() { echo "$checks checks passed"; }
# Every epoch's value of a profile CSV's column, found by its header, one a line.
profile_column() {  # file column
  awk -F, -v c="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) at = i; next } at { print $at }' "$1"
}
