#include "device/thrust_top_k.h"

#include <algorithm>
#include <cmath>

#include <thrust/binary_search.h>
#include <thrust/copy.h>
#include <thrust/count.h>
#include <thrust/execution_policy.h>
#include <thrust/functional.h>
#include <thrust/gather.h>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>
#include <thrust/sort.h>
#include <thrust/transform.h>
#include <thrust/transform_scan.h>

#include "device/thrust_functors.h"

namespace mpisgd::thrust_detail {
namespace {

// Sample j of s: the magnitude at a position in the j-th of s equal strata of [0, n), at
// an offset a hash of j picks, so that an input with a period does not line up with the
// sample. Which positions are drawn decides the selection's speed only, never what it
// keeps. n >= 4 s, so every stratum holds a position.
struct SampleMagnitude {
  const float* values;
  uint64_t n, s;
  MPISGD_HD uint32_t operator()(uint64_t j) const {
    const uint64_t begin = j * n / s, width = (j + 1) * n / s - begin;
    uint64_t h = (j + 1) * 0x9E3779B97F4A7C15ull;
    h = (h ^ (h >> 31)) * 0xBF58476D1CE4E5B9ull;
    h ^= h >> 29;
    return Magnitude{}(values[begin + h % width]);
  }
};

struct Equal {
  uint32_t t;
  MPISGD_HD uint32_t operator()(uint32_t m) const { return m == t; }
};

// Candidate j is kept: above the k-th magnitude t, or equal to it and among the first
// `ties` such candidates (tie_rank: how many before j equal t).
struct KeepTop {
  const uint32_t* mag;
  const uint32_t* tie_rank;
  uint32_t t;
  uint64_t ties;
  MPISGD_HD bool operator()(uint32_t j) const { return mag[j] > t || (mag[j] == t && tie_rank[j] < ties); }
};

// s of the header: the sample that balances its own sort against the candidates' excess.
uint64_t sample_size(uint64_t k, uint64_t n) {
  const auto kd = static_cast<double>(k), nd = static_cast<double>(n);
  return static_cast<uint64_t>(std::max(std::cbrt(2.25 * kd * nd), std::sqrt(3 * nd))) + 1;
}

}  // namespace

uint32_t top_k_positions(thrust::device_ptr<const float> values, uint64_t n, uint64_t k,
                         thrust::device_vector<uint32_t>& kept, TopKScratch& s, TemporaryCache& temporaries) {
  const auto on = thrust::device(temporaries);
  const auto mag = thrust::make_transform_iterator(values, Magnitude{});
  uint32_t t0 = 0;
  uint64_t c = n;
  if (const uint64_t size = sample_size(k, n); size * 4 <= n) {
    s.sample.resize(size);
    const thrust::counting_iterator<uint64_t> j(0);
    thrust::transform(on, j, j + size, s.sample.begin(),
                      SampleMagnitude{thrust::raw_pointer_cast(values), n, size});
    thrust::sort(on, s.sample.begin(), s.sample.end(), thrust::greater<uint32_t>());
    const double ks = static_cast<double>(k) * static_cast<double>(size) / static_cast<double>(n);
    for (auto r = static_cast<uint64_t>(std::ceil(ks + 3 * std::sqrt(ks) + 3));; r *= 4) {
      t0 = r <= size ? static_cast<uint32_t>(s.sample[r - 1]) : 0;
      c = t0 == 0 ? n : static_cast<uint64_t>(thrust::count_if(on, mag, mag + n, AtLeast{t0}));
      if (c >= k) break;
    }
  }
  const thrust::counting_iterator<uint32_t> position(0);
  s.cand.resize(c);
  thrust::copy_if(on, position, position + n, mag, s.cand.begin(), AtLeast{t0});
  s.cand_mag.resize(c);
  thrust::gather(on, s.cand.begin(), s.cand.end(), mag, s.cand_mag.begin());
  s.sorted = s.cand_mag;
  thrust::sort(on, s.sorted.begin(), s.sorted.end(), thrust::greater<uint32_t>());
  const uint32_t t = s.sorted[k - 1];
  // Descending, so the candidates above t are those before the first that is not.
  const auto above = static_cast<uint64_t>(
      thrust::lower_bound(on, s.sorted.begin(), s.sorted.end(), t, thrust::greater<uint32_t>()) -
      s.sorted.begin());
  s.tie_rank.resize(c);
  thrust::transform_exclusive_scan(on, s.cand_mag.begin(), s.cand_mag.end(), s.tie_rank.begin(),
                                   Equal{t}, uint32_t{0}, thrust::plus<uint32_t>());
  kept.resize(k);
  thrust::copy_if(on, s.cand.begin(), s.cand.end(), position, kept.begin(),
                  KeepTop{thrust::raw_pointer_cast(s.cand_mag.data()), thrust::raw_pointer_cast(s.tie_rank.data()),
                          t, k - above});
  return t;
}

}  // namespace mpisgd::thrust_detail
