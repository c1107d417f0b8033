#include "sparse/summation_speed.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <random>
#include <vector>

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

// About one index in 64, at random, so that the merge's branches are as unpredictable
// as with real index sets.
Stream<float> random_stream(unsigned seed, Range range) {
  std::mt19937 rng(seed);
  std::vector<uint32_t> index;
  for (uint32_t i = range.begin; i < range.end; ++i) {
    if ((rng() & 63) == 0) index.push_back(i);
  }
  std::vector<float> value(index.size(), 1.0f);
  Stream<float> s(range.length());
  encode<float>(index, value, range, DenseSwitch{1.0}, s);
  return s;
}

}  // namespace

SummationSpeed measure_summation_speed() {
  constexpr uint32_t kLength = 1 << 21;  // 8 MiB of floats: past the private caches
  const Range range{0, kLength};
  const DenseSwitch sparse_only{1.0};
  const Stream<float> a = random_stream(1, range), b = random_stream(2, range);
  Stream<float> acc(kLength), in(kLength), scratch(kLength);
  const double merge = best_seconds([&] {
    acc.copy_from(a);
    in.copy_from(b);
    add_overlapping(acc, in, scratch, range, sparse_only);
  });
  acc.set_zero_dense(kLength);
  in.set_zero_dense(kLength);
  const double dense = best_seconds([&] { add_overlapping(acc, in, scratch, range, sparse_only); });
  return {merge / static_cast<double>(a.count() + b.count()), dense / kLength};
}

}  // namespace mpisgd
