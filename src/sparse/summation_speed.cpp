#include "sparse/summation_speed.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

#include "sparse/random.h"
#include "sparse/stream_sum.h"

namespace mpisgd {
namespace {

// Fastest of a few runs: the figure least disturbed by other processes.
template <class F>
double best_seconds(F&& f) {
  double best = 1e30;
  for (int rep = 0; rep < 5; ++rep) {
    auto start = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

// About one index in 64, at random, so that which input the merge takes next is as
// unpredictable as with real index sets: gaps drawn uniformly from 1-128, seven bits of a
// draw each. (A coin for each of the range's 2^21 indices took 2-3 ms a stream, the gaps
// 0.4 ms.)
Stream<float> random_stream(uint64_t seed, Range range) {
  std::vector<uint32_t> index;
  uint64_t bits = 0;
  for (uint64_t i = range.begin, left = 0;; --left, bits >>= 7) {
    if (left == 0) bits = splitmix64(seed), left = 9;
    i += 1 + (bits & 127);
    if (i >= range.end) break;
    index.push_back(static_cast<uint32_t>(i));
  }
  std::vector<float> value(index.size(), 1.0f);
  Stream<float> s(range.length());
  encode<float>(index, value, range, DenseSwitch{1.0}, s);
  return s;
}

}  // namespace

SummationSpeed measure_summation_speed() {
  // The merge's inputs span 8 MiB of floats, 32K pairs each: on a quarter of that the five
  // runs measured 1.3-1.8 ns an item against 4.5-5.7, their small index sets learnt or
  // cached as they repeat, where a collective's merges never do. The dense addition needs
  // only to pass the private caches: on 2 MiB of floats it measures what it does on 8
  // (0.15 ns a value) without first writing 16 MiB of fresh pages, 50 ms of a start-up.
  constexpr uint32_t kLength = 1 << 21, kDenseLength = 1 << 19;
  const Range range{0, kLength};
  const DenseSwitch sparse_only{1.0};
  // The dense addition goes first: its 6 MiB of first writes then also map the pages
  // the merge writes, which its first run would otherwise fault in one by one.
  Stream<float> acc(kLength), in(kLength), scratch(kLength);
  acc.set_zero_dense(kDenseLength);
  in.set_zero_dense(kDenseLength);
  const double dense = best_seconds([&] { add_overlapping(acc, in, scratch, {0, kDenseLength}, sparse_only); });
  const Stream<float> a = random_stream(1, range), b = random_stream(2, range);
  const double merge = best_seconds([&] {
    acc.copy_from(a);
    in.copy_from(b);
    add_overlapping(acc, in, scratch, range, sparse_only);
  });
  return {merge / static_cast<double>(a.count() + b.count()), dense / kDenseLength};
}

}  // namespace mpisgd
