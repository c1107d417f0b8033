// The top-k selectors of topk_select.h. All of them compare magnitudes as the bits of |v|:
// the bits of non-negative floats order as the floats do, so a threshold is a uint32, the hot
// loops are integer compares, and a step of 2^23 in bits scales a threshold by 2 in value.
// A threshold t keeps every value with |v| >= t.
#include "sparse/topk_select.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <functional>
#include <numbers>
#include <optional>
#include <stdexcept>
#include <string>

#include "sparse/random.h"

namespace mpisgd {
namespace {

inline uint32_t magnitude(float v) { return std::bit_cast<uint32_t>(v) & 0x7fffffffu; }

// Above every magnitude, NaN included: keeps nothing.
constexpr uint64_t kAboveAll = 0x80000000u;

size_t count_at_least(std::span<const float> values, uint32_t t) {
  size_t c = 0;
  for (float v : values) c += magnitude(v) >= t;
  return c;
}

void keep_at_least(std::span<const float> values, uint32_t t, std::vector<uint32_t>& kept) {
  kept.clear();
  for (size_t i = 0; i < values.size(); ++i)
    if (magnitude(values[i]) >= t) kept.push_back(static_cast<uint32_t>(i));
}

void keep_all(size_t n, std::vector<uint32_t>& kept) {
  kept.resize(n);
  for (size_t i = 0; i < n; ++i) kept[i] = static_cast<uint32_t>(i);
}

// Handles the cases every method shares; true when `kept` is already the answer.
bool trivial(size_t n, size_t k, std::vector<uint32_t>& kept) {
  if (k == 0) kept.clear();
  if (k >= n) keep_all(n, kept);
  return k == 0 || k >= n;
}

// Counts a threshold may give: [ceil(k num_lo / den_lo), floor(k num_hi / den_hi)]. Never empty
// for k >= 1 when the fractions bracket 1.
struct Band {
  size_t lo, hi;
  static Band of(size_t k, size_t num_lo, size_t den_lo, size_t num_hi, size_t den_hi) {
    return {(k * num_lo + den_lo - 1) / den_lo, k * num_hi / den_hi};
  }
  bool holds(size_t c) const { return c >= lo && c <= hi; }
};

// Bits of the k-th largest magnitude, 1 <= k <= n, by nth_element over a copy: O(n) expected.
// Leaves the k largest in scratch[0, k).
uint32_t kth_largest(std::span<const float> values, size_t k, std::vector<uint32_t>& scratch) {
  scratch.resize(values.size());
  std::transform(values.begin(), values.end(), scratch.begin(), magnitude);
  std::nth_element(scratch.begin(), scratch.begin() + static_cast<ptrdiff_t>(k - 1), scratch.end(),
                   std::greater<>());
  return scratch[k - 1];
}

// Exactly the k largest magnitudes, 1 <= k < n; of the values tied with the k-th, the lowest
// positions. Returns the k-th magnitude, the threshold that reproduces the selection ties aside.
uint32_t keep_exact(std::span<const float> values, size_t k, std::vector<uint32_t>& scratch,
                    std::vector<uint32_t>& kept) {
  const uint32_t t = kth_largest(values, k, scratch);
  // Everything after scratch[k - 1] is <= t, so the strictly larger ones are all in front.
  size_t ties = k;
  for (size_t i = 0; i + 1 < k; ++i) ties -= scratch[i] > t;
  kept.clear();
  for (size_t i = 0; i < values.size(); ++i) {
    const uint32_t m = magnitude(values[i]);
    if (m > t) {
      kept.push_back(static_cast<uint32_t>(i));
    } else if (m == t && ties > 0) {
      kept.push_back(static_cast<uint32_t>(i));
      --ties;
    }
  }
  return t;
}

// A threshold whose count lies in `band`, starting from `t` that counts `c`: scale t up or
// down by growing factors (2^(1/8), 2^(1/4), ...) until the band is crossed, then bisect the
// bits. One counting pass a step; a start within a factor 2 of the answer takes a few. None
// when ties leave no threshold in the band (all values equal, say).
std::optional<uint32_t> refine(std::span<const float> values, uint32_t t, size_t c, Band band) {
  if (band.holds(c)) return t;
  // Invariant: count(a) > band.hi and count(b) < band.lo.
  uint64_t a = 0, b = kAboveAll, step = uint64_t{1} << 20;
  if (c > band.hi) {
    for (a = t;; a += step, step *= 2) {
      if (a + step >= kAboveAll) break;
      const size_t cn = count_at_least(values, static_cast<uint32_t>(a + step));
      if (band.holds(cn)) return static_cast<uint32_t>(a + step);
      if (cn < band.lo) {
        b = a + step;
        break;
      }
    }
  } else {
    // count(0) = n > k >= band.lo, so 0 is a valid a unless n itself is in the band.
    if (band.holds(values.size())) return 0;
    for (b = t;; b -= step, step *= 2) {
      if (b <= step) break;
      const size_t cn = count_at_least(values, static_cast<uint32_t>(b - step));
      if (band.holds(cn)) return static_cast<uint32_t>(b - step);
      if (cn > band.hi) {
        a = b - step;
        break;
      }
    }
  }
  while (b - a > 1) {
    const auto mid = static_cast<uint32_t>(a + (b - a) / 2);
    const size_t cm = count_at_least(values, mid);
    if (band.holds(cm)) return mid;
    (cm > band.hi ? a : b) = mid;
  }
  return std::nullopt;
}

// Keeps what threshold `t` keeps if its count lies in `band`, else what a refined threshold
// keeps, else the exact k. Returns the threshold used. The usual case is one pass.
uint32_t keep_in_band(std::span<const float> values, size_t k, uint32_t t, Band band,
                      std::vector<uint32_t>& scratch, std::vector<uint32_t>& kept) {
  keep_at_least(values, t, kept);
  if (band.holds(kept.size())) return t;
  if (auto r = refine(values, t, kept.size(), band)) {
    keep_at_least(values, *r, kept);
    return *r;
  }
  return keep_exact(values, k, scratch, kept);
}

// exact: the k largest magnitudes. nth_element over a copy of the magnitudes finds the k-th,
// one pass keeps what lies above it and the first ties. O(n) expected, no sort; 4n bytes of
// scratch.
class ExactSelector final : public TopkSelector {
 public:
  void select(std::span<const float> values, size_t k, std::vector<uint32_t>& kept) override {
    if (!trivial(values.size(), k, kept)) keep_exact(values, k, scratch_, kept);
  }

 private:
  std::vector<uint32_t> scratch_;
};

// approx (thesis section 2.4.1, Theorem 2.1): value i is kept independently with
//
//   p_i = k |v_i| / ||v||_1                           if ||v||_inf <= ||v||_1 / k
//   p_i = k (|v_i| + eps) / (||v||_1 + n eps)         otherwise, eps = (k ||v||_inf - ||v||_1) / (n - k)
//
// so sum p_i = k: k values in expectation, with variance sum p_i (1 - p_i) <= k. eps is the
// smallest the thesis allows (p_i <= 1), which favours magnitude most; the largest value is
// then always kept. The thesis' N is our n: only the given non-zeros compete. If all values
// are zero, p_i = k / n (the limit eps -> inf). Two passes, one for the norms and one drawing
// a number per value: O(n), no scratch.
class ApproxSelector final : public TopkSelector {
 public:
  explicit ApproxSelector(uint64_t seed) : state_(seed) {}

  void select(std::span<const float> values, size_t k, std::vector<uint32_t>& kept) override {
    const size_t n = values.size();
    if (trivial(n, k, kept)) return;
    double l1 = 0, linf = 0;
    for (float v : values) {
      const double m = std::fabs(static_cast<double>(v));
      l1 += m;
      linf = std::max(linf, m);
    }
    const double kd = static_cast<double>(k), nd = static_cast<double>(n);
    double eps = 0, scale = kd / l1;
    if (l1 == 0) {
      eps = 1;
      scale = kd / nd;
    } else if (linf > l1 / kd) {
      eps = (kd * linf - l1) / (nd - kd);
      scale = kd / (l1 + nd * eps);
    }
    kept.clear();
    for (size_t i = 0; i < n; ++i) {
      const double u = static_cast<double>(splitmix64(state_) >> 11) * 0x1p-53;
      const double p = scale * (std::fabs(static_cast<double>(values[i])) + eps);
      if (u < p) kept.push_back(static_cast<uint32_t>(i));
    }
  }

 private:
  uint64_t state_;
};

// threshold-reuse (Ok-Topk, Li and Hoefler 2022, section 3.1.3): gradients change slowly, so
// the exact threshold (the k-th magnitude) is computed every T calls (tau', default 32 as in
// their VGG-16 and LSTM runs) and reused between. A reused threshold whose count has drifted
// out of [2k/3, 5k/4] is scaled up or down into the band and kept for the next calls.
// Cost: the exact selection once per T calls, one pass otherwise, a few more after drift.
class ThresholdReuseSelector final : public TopkSelector {
 public:
  explicit ThresholdReuseSelector(uint32_t period) : period_(period) {}

  void select(std::span<const float> values, size_t k, std::vector<uint32_t>& kept) override {
    const bool fresh = step_++ % period_ == 0 || !threshold_;
    if (trivial(values.size(), k, kept)) return;
    if (fresh)
      threshold_ = keep_exact(values, k, scratch_, kept);
    else
      threshold_ = keep_in_band(values, k, *threshold_, Band::of(k, 2, 3, 5, 4), scratch_, kept);
  }

 private:
  uint32_t period_;
  uint64_t step_ = 0;
  std::optional<uint32_t> threshold_;
  std::vector<uint32_t> scratch_;
};

// P(|X| >= t) for X ~ N(mu, sigma^2), sigma > 0.
double normal_tail(double t, double mu, double sigma) {
  const double s = sigma * std::numbers::sqrt2;
  return 0.5 * (std::erfc((t - mu) / s) + std::erfc((t + mu) / s));
}

// gaussian (Gaussiank, Shi et al. 2019, as run in Ok-Topk section 5.4): fit N(mu, sigma^2) to
// the values and take the t with P(|X| >= t) = k/n (their percent-point function, two-sided
// here because we select by magnitude). Real gradients have lighter tails than the fit, so the
// count falls short (Ok-Topk Figure 4); the threshold is refined until the count lies in
// [3k/4, 5k/4]. Cost: a pass for mu and sigma, one for the selection, a few more to refine.
class GaussianSelector final : public TopkSelector {
 public:
  void select(std::span<const float> values, size_t k, std::vector<uint32_t>& kept) override {
    const size_t n = values.size();
    if (trivial(n, k, kept)) return;
    double sum = 0, sum_sq = 0;
    for (float v : values) {
      sum += v;
      sum_sq += static_cast<double>(v) * v;
    }
    const double nd = static_cast<double>(n), mu = sum / nd;
    const double sigma = std::sqrt(std::max(0.0, sum_sq / nd - mu * mu));
    const double target = static_cast<double>(k) / nd;
    double t = std::fabs(mu);
    if (sigma > 0) {
      double lo = 0, hi = std::fabs(mu) + 40 * sigma;  // the tail is ~1e-350 at 40 sigma
      for (int i = 0; i < 100; ++i) {
        const double mid = 0.5 * (lo + hi);
        (normal_tail(mid, mu, sigma) > target ? lo : hi) = mid;
      }
      t = hi;
    }
    keep_in_band(values, k, magnitude(static_cast<float>(t)), Band::of(k, 3, 4, 5, 4), scratch_, kept);
  }

 private:
  std::vector<uint32_t> scratch_;
};

// sampled (Marian's gradient dropping, Neckermann 2017 section 3.8, after Aji and Heafield
// 2017): the threshold is the k s / n -th magnitude of s values drawn at random (with
// replacement). s is chosen so that about 256 sampled values lie above the threshold, which
// puts the count within ~6% of k (one standard deviation), and at least 1024; once that is n
// or more the selection is exact. Then, as for gaussian, the count is held in [3k/4, 5k/4].
// Cost: O(s) to draw and select in the sample, one pass over n.
class SampledSelector final : public TopkSelector {
 public:
  static constexpr size_t kMinSample = 1024, kHitsInSample = 256;

  explicit SampledSelector(uint64_t seed) : state_(seed) {}

  void select(std::span<const float> values, size_t k, std::vector<uint32_t>& kept) override {
    const size_t n = values.size();
    if (trivial(n, k, kept)) return;
    const size_t s = std::max(kMinSample, (kHitsInSample * n + k - 1) / k);
    if (s >= n) {
      keep_exact(values, k, scratch_, kept);
      return;
    }
    sample_.resize(s);
    for (float& x : sample_)
      x = values[draw_below(state_, n)];
    const size_t ks = std::max<size_t>(1, (k * s + n / 2) / n);
    const uint32_t t = kth_largest(sample_, ks, scratch_);
    keep_in_band(values, k, t, Band::of(k, 3, 4, 5, 4), scratch_, kept);
  }

 private:
  uint64_t state_;
  std::vector<float> sample_;
  std::vector<uint32_t> scratch_;
};

constexpr std::array<std::string_view, 5> kNames{"exact", "approx", "threshold-reuse", "gaussian", "sampled"};

}  // namespace

std::span<const std::string_view> topk_selector_names() { return kNames; }

std::unique_ptr<TopkSelector> make_topk_selector(std::string_view name, const TopkOptions& options) {
  if (name == "exact") return std::make_unique<ExactSelector>();
  if (name == "approx") return std::make_unique<ApproxSelector>(options.seed);
  if (name == "threshold-reuse") {
    if (options.reuse_period == 0)
      throw std::invalid_argument("top-k threshold-reuse: the reuse period must be at least 1");
    return std::make_unique<ThresholdReuseSelector>(options.reuse_period);
  }
  if (name == "gaussian") return std::make_unique<GaussianSelector>();
  if (name == "sampled") return std::make_unique<SampledSelector>(options.seed);
  std::string known;
  for (auto n : kNames) known += (known.empty() ? "" : ", ") + std::string(n);
  throw std::invalid_argument("unknown top-k selection '" + std::string(name) + "' (known: " + known + ")");
}

void split_selected(const SparseVector& in, std::span<const uint32_t> kept, SparseVector& sent,
                    SparseVector& residual) {
  sent.clear();
  residual.clear();
  size_t next = 0;
  for (size_t i = 0; i < in.nnz(); ++i) {
    SparseVector& to = next < kept.size() && kept[next] == i ? (++next, sent) : residual;
    to.index.push_back(in.index[i]);
    to.value.push_back(in.value[i]);
  }
}

}  // namespace mpisgd
