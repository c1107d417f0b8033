#!/usr/bin/env bash
# Downloads the real URL and Webspam sets from the LIBSVM binary datasets page,
# decompresses them and splits off the last 20% of each as a test set (neither
# set comes with one). Safe to rerun: finished steps are skipped, an interrupted
# download resumes, and nothing half-written is left under its final name.
set -euo pipefail

BASE=${LIBSVM_MIRROR:-https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/binary}
TEST_PERCENT=${TEST_PERCENT:-20}

usage() {
  cat <<EOF
Usage: scripts/datasets.sh [DIR] [url|webspam]...

Downloads the real data sets from $BASE
into DIR (default: data/ of this repository), decompresses them and splits off
the last ${TEST_PERCENT}% of lines as a test set (TEST_PERCENT=N to change it;
LIBSVM_MIRROR=URL to download from a mirror with the same file names):

  url      url_combined.bz2: 2,396,130 rows x 3,231,961 features
           -> DIR/url.train, DIR/url.test                 (about 2.4 GB)
  webspam  webspam_wc_normalized_trigram.svm.bz2: 350,000 rows x 16,609,143 features
           -> DIR/webspam.train, DIR/webspam.test         (about 24 GB)

Default: both. Needs curl or wget, bzip2 (lbzip2 or pbzip2 are used if present)
and free space for the archive plus the decompressed set. Files that already
exist are kept. For synthetic data of the same shape without a download, see
build/gen_data --help.
EOF
}

fail() {
  echo "datasets: $*" >&2
  exit 1
}

download() {  # url file: resumes a partial download left by an earlier run
  if command -v curl >/dev/null; then
    curl -fL -# --retry 3 -C - -o "$2" "$1"
  elif command -v wget >/dev/null; then
    wget -c -O "$2" "$1"
  else
    fail "neither curl nor wget is installed"
  fi
}

decompress() {  # archive: to stdout
  case $1 in
    *.bz2)
      if command -v lbzip2 >/dev/null; then lbzip2 -dc "$1"
      elif command -v pbzip2 >/dev/null; then pbzip2 -dc "$1"
      else bzip2 -dc "$1"
      fi ;;
    *.xz)
      command -v xz >/dev/null || fail "xz is not installed (apt-get install xz-utils)"
      xz -dc -T0 "$1" ;;
  esac
}

# fetch NAME REMOTE: DIR/NAME.full, the whole decompressed set.
fetch() {
  local name=$1 remote=$2 full="$dir/$1.full" archive
  [[ -f $full ]] && return 0
  # The LIBSVM page has served its largest files as .bz2 and later as .xz.
  for ext in bz2 xz; do
    archive="$dir/$remote.$ext"
    if [[ ! -f $archive ]]; then
      echo "datasets: downloading $BASE/$remote.$ext"
      if ! download "$BASE/$remote.$ext" "$archive.part"; then
        [[ -s $archive.part ]] && fail "download of $BASE/$remote.$ext was interrupted; rerun to resume it"
        rm -f "$archive.part"
        continue
      fi
      mv "$archive.part" "$archive"
    fi
    echo "datasets: decompressing $archive"
    decompress "$archive" >"$full.part" || fail "cannot decompress $archive (corrupt? delete it and rerun)"
    mv "$full.part" "$full"
    rm -f "$archive"
    return 0
  done
  fail "download of $remote failed (no network, or the LIBSVM site is down or has moved it).
Download $BASE/$remote.bz2 by hand into $dir/ and rerun."
}

# split NAME: DIR/NAME.full -> DIR/NAME.train + DIR/NAME.test, without a second
# copy of the training part. The cut is recorded first, the test part is
# complete before the full file is truncated, and truncating to the recorded
# size is idempotent, so an interrupted split finishes correctly when rerun.
split_off_test() {
  local name=$1 full="$dir/$1.full" train="$dir/$1.train" test="$dir/$1.test" cut="$dir/.$1.cut"
  if [[ ! -f $cut ]]; then
    local lines keep
    lines=$(wc -l <"$full")
    keep=$((lines - lines * TEST_PERCENT / 100))
    head -n "$keep" "$full" | wc -c >"$cut.part"
    mv "$cut.part" "$cut"
  fi
  local bytes
  bytes=$(<"$cut")
  if [[ ! -f $test ]]; then
    tail -c +$((bytes + 1)) "$full" >"$test.part"
    mv "$test.part" "$test"
  fi
  truncate -s "$bytes" "$full"
  mv "$full" "$train"
  rm -f "$cut"
}

prepare() {  # name remote
  local name=$1 train="$dir/$1.train" test="$dir/$1.test" cut="$dir/.$1.cut"
  if [[ -f $train && -f $test ]]; then
    rm -f "$cut"
    echo "datasets: $train and $test are there"
    return 0
  fi
  if [[ -f $train ]]; then  # a training set without a test set: split it
    rm -f "$cut"
    mv "$train" "$dir/$name.full"
  else
    fetch "$@"
  fi
  if [[ -f $test && ! -f $cut ]]; then  # a test set of the user's own: keep all rows for training
    mv "$dir/$name.full" "$train"
  else
    echo "datasets: splitting the last ${TEST_PERCENT}% of $name off as a test set"
    split_off_test "$name"
  fi
  echo "datasets: $(wc -l <"$train") rows in $train, $(wc -l <"$test") in $test"
}

dir="$(cd "$(dirname "$0")/.." && pwd)/data"
sets=()
for arg in "$@"; do
  case $arg in
    -h | --help) usage; exit 0 ;;
    url | webspam) sets+=("$arg") ;;
    -*) usage >&2; exit 2 ;;
    *) dir=$arg ;;
  esac
done
[[ ${#sets[@]} -gt 0 ]] || sets=(url webspam)
[[ $TEST_PERCENT =~ ^[0-9]+$ && $TEST_PERCENT -ge 1 && $TEST_PERCENT -le 99 ]] ||
  fail "TEST_PERCENT must be an integer from 1 to 99, not '$TEST_PERCENT'"
command -v bzip2 >/dev/null || fail "bzip2 is not installed (apt-get install bzip2)"
mkdir -p "$dir" || fail "cannot create $dir"

for set in "${sets[@]}"; do
  case $set in
    url) prepare url url_combined ;;
    webspam) prepare webspam webspam_wc_normalized_trigram.svm ;;
  esac
done
