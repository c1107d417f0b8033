#include "sparse/topk_select.h"

#include <cmath>

#include "comm/state_blob.h"
#include "sparse/random.h"
#include "sparse/topk_kernels.h"

namespace mpisgd {
namespace {

using namespace topk;

// A uniform 32-bit draw for position i from a call's key: the murmur3 finaliser (a bijection
// that mixes every input bit into every output bit) of i keyed by an add and an xor, so that two
// keys' sequences are not shifts of one another. Counter-based, so the draws of a pass vectorise,
// and a key (one splitmix64 draw a call) fixes them with any standard library.
inline uint32_t draw_at(uint32_t i, uint32_t key_add, uint32_t key_xor) {
  uint32_t x = (i + key_add) ^ key_xor;
  x ^= x >> 16;
  x *= 0x85ebca6bu;
  x ^= x >> 13;
  x *= 0xc2b2ae35u;
  return x ^ (x >> 16);
}

// approx (thesis section 2.4.1, Theorem 2.1): value i is kept independently with
//
//   p_i = k |v_i| / ||v||_1                           if ||v||_inf <= ||v||_1 / k
//   p_i = k (|v_i| + eps) / (||v||_1 + n eps)         otherwise, eps = (k ||v||_inf - ||v||_1) / (n - k)
//
// so sum p_i = k: k values in expectation, with variance sum p_i (1 - p_i) <= k. eps is the
// smallest the thesis allows (p_i <= 1), which favours magnitude most; the largest value is
// then always kept. The thesis' N is our n: only the given non-zeros compete. If all values
// are zero, p_i = k / n (the limit eps -> inf). Two passes, one for the norms and one keeping
// value i when u_i < p_i, both times 2^24 in float, u_i the top 24 bits of draw_at (so p
// resolves to 2^-24): O(n), no scratch.
// ||v||_1 and ||v||_inf in one pass (sum_lanes says how the sums run).
struct Norms {
  double l1 = 0, linf = 0;
};

Norms norms(std::span<const float> values) {
  const float* v = values.data();
  const size_t n = values.size();
  Norms out;
  uint32_t top = 0;
  size_t i = 0;
  for (; i + kChunk <= n; i += kChunk) {
    std::array<float, kBlock> lane{};
    std::array<uint32_t, kBlock> most{};
    for (size_t b = i; b < i + kChunk; b += kBlock) {
#pragma omp simd
      for (size_t j = 0; j < kBlock; ++j) {
        lane[j] += std::fabs(v[b + j]);
        most[j] = std::max(most[j], magnitude(v[b + j]));
      }
    }
    out.l1 += sum_lanes(lane);
    top = std::max(top, *std::max_element(most.begin(), most.end()));
  }
  for (; i < n; ++i) {
    out.l1 += std::fabs(v[i]);
    top = std::max(top, magnitude(v[i]));
  }
  out.linf = std::bit_cast<float>(top);
  return out;
}

class ApproxSelector final : public TopkSelector {
 public:
  explicit ApproxSelector(uint64_t seed) : state_(seed) {}

  void select(std::span<const float> values, size_t k, std::vector<uint32_t>& kept) override {
    const size_t n = values.size();
    if (trivial(n, k, kept)) return;
    const auto [l1, linf] = norms(values);
    const double kd = static_cast<double>(k), nd = static_cast<double>(n);
    double eps = 0, scale = kd / l1;
    if (l1 == 0) {
      eps = 1;
      scale = kd / nd;
    } else if (linf > l1 / kd) {
      eps = (kd * linf - l1) / (nd - kd);
      scale = kd / (l1 + nd * eps);
    }
    const uint64_t key = splitmix64(state_);
    const auto add = static_cast<uint32_t>(key), mix = static_cast<uint32_t>(key >> 32);
    const auto scale24 = static_cast<float>(scale * 0x1p24), epsf = static_cast<float>(eps);
    const float* v = values.data();
    const auto hit = [=](size_t b, uint32_t j) {
      const uint32_t draw = draw_at(static_cast<uint32_t>(b) + j, add, mix);
      const auto u = static_cast<float>(static_cast<int32_t>(draw >> 8));
      return u < scale24 * (std::fabs(v[b + j]) + epsf);
    };
    collect<false>(n, k * 128 < n, hit, kept);
  }
  void save_state(StateWriter& out) const override { out.put(state_); }
  void load_state(StateReader& in) override { state_ = in.get<uint64_t>(); }

 private:
  uint64_t state_;
};

}  // namespace

std::unique_ptr<TopkSelector> make_approx_selector(const TopkOptions& options) {
  return std::make_unique<ApproxSelector>(options.seed);
}

}  // namespace mpisgd
