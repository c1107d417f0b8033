#!/usr/bin/env bash
# The library's floors (docs/design.md, "Layers"): a file may include its own floor's
# headers and those of the floors below, never a floor above. Reads every
# `#include "folder/file.h"` in src/ and strategies/, prints each upward one as
# FILE:LINE: what it includes and why that is upward, and exits non-zero if there is any,
# or if a folder of src/ has no floor (a new folder must be placed in the picture).
#
#   scripts/check_layers.sh          (also `make check-layers`; `make test` runs it)
set -euo pipefail
cd "$(dirname "$0")/.."

# Top to bottom; folders on one line share a floor and may include each other.
floors=(
  "jobs"
  "sgd"
  "strategies"
  "collectives ps"
  "device"
  "sparse model profile checkpoint"
  "data"
  "comm cli"
)

declare -A floor_of
for ((f = 0; f < ${#floors[@]}; ++f)); do
  for folder in ${floors[f]}; do floor_of[$folder]=$((${#floors[@]} - f)); done
done

bad=0
for dir in src/*/; do
  folder=$(basename "$dir")
  [[ -n ${floor_of[$folder]:-} ]] || { echo "src/$folder/: no floor in scripts/check_layers.sh"; bad=1; }
done

while IFS=: read -r file line text; do
  folder=$(basename "$(dirname "$file")")
  target=$(sed -E 's/^#include "([a-z_0-9]+)\/.*/\1/' <<<"$text")
  from=${floor_of[$folder]:-}
  to=${floor_of[$target]:-}
  [[ -n $from && -n $to ]] || continue
  if ((to > from)); then
    echo "$file:$line: $folder includes $target (${text#\#include }), a floor above it"
    bad=1
  fi
done < <(grep -nE '^#include "[a-z_0-9]+/[a-z_0-9]+\.h"' -r src strategies --include='*.h' --include='*.cpp')

if ((bad)); then
  echo "check_layers: includes must point down, floors from the top: $(printf '%s | ' "${floors[@]}" | sed 's/ | $//')"
  exit 1
fi
echo "check_layers: every include points down or sideways (${#floors[@]} floors)"
