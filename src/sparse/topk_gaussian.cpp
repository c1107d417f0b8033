#include "sparse/topk_select.h"

#include <cmath>
#include <numbers>

#include "sparse/topk_kernels.h"

namespace mpisgd {
namespace {

using namespace topk;

// The sum and the sum of squares of the values in one pass (sum_lanes says how).
struct Moments {
  double sum = 0, sum_sq = 0;
};

Moments moments(std::span<const float> values) {
  const float* v = values.data();
  const size_t n = values.size();
  Moments out;
  size_t i = 0;
  for (; i + kChunk <= n; i += kChunk) {
    std::array<float, kBlock> lane{}, lane_sq{};
    for (size_t b = i; b < i + kChunk; b += kBlock) {
#pragma omp simd
      for (size_t j = 0; j < kBlock; ++j) {
        lane[j] += v[b + j];
        lane_sq[j] += v[b + j] * v[b + j];
      }
    }
    out.sum += sum_lanes(lane);
    out.sum_sq += sum_lanes(lane_sq);
  }
  for (; i < n; ++i) {
    out.sum += v[i];
    out.sum_sq += static_cast<double>(v[i]) * v[i];
  }
  return out;
}

// P(|X| >= t) for X ~ N(mu, sigma^2), sigma > 0.
double normal_tail(double t, double mu, double sigma) {
  const double s = sigma * std::numbers::sqrt2;
  return 0.5 * (std::erfc((t - mu) / s) + std::erfc((t + mu) / s));
}

// gaussian (Gaussiank, Shi et al. 2019, as run in Ok-Topk section 5.4): fit N(mu, sigma^2) to
// the values and take the t with P(|X| >= t) = k/n (their percent-point function, two-sided
// here because we select by magnitude). Real gradients have lighter tails than the fit, so the
// count falls short (Ok-Topk Figure 4); a count outside [3k/4, 5k/4] is replaced by the exact k
// (keep_in_band). Cost: a pass for mu and sigma, one for the selection, about one more to fix
// the count.
class GaussianSelector final : public TopkSelector {
 public:
  void select(std::span<const float> values, size_t k, std::vector<uint32_t>& kept) override {
    const size_t n = values.size();
    if (trivial(n, k, kept)) return;
    const auto [sum, sum_sq] = moments(values);
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
  Scratch scratch_;
};

}  // namespace

std::unique_ptr<TopkSelector> make_gaussian_selector(const TopkOptions&) { return std::make_unique<GaussianSelector>(); }

}  // namespace mpisgd
