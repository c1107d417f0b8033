// The top-k selectors of topk_select.h. All of them compare magnitudes as the bits of |v|:
// the bits of non-negative floats order as the floats do, so a threshold is a uint32 and the
// hot loops are integer compares. A threshold t keeps every value with |v| >= t. Inputs are
// NaN-free (a gradient holding a NaN has diverged before it is sparsified).
//
// Every pass over the n values runs near the speed of reading them (collect below): a block of
// 16 values is compared in one vectorised step into a bit mask, and the positions of its set
// bits are written from a table, with no branch per value. A selection is one or two such
// passes plus work on the few values it keeps: never a sort, nor a copy of all n.
#include "sparse/topk_select.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <numbers>
#include <optional>
#include <stdexcept>
#include <string>

#include "comm/find_by_name.h"
#include "comm/state_blob.h"
#include "sparse/random.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace mpisgd {
namespace {

inline uint32_t magnitude(float v) { return std::bit_cast<uint32_t>(v) & 0x7fffffffu; }

constexpr size_t kBlock = 16;

// bit[j] = 2^j; set[m] = the positions of the set bits of the byte m, ascending.
struct BitTables {
  std::array<uint32_t, kBlock> bit{};
  std::array<std::array<uint32_t, 8>, 256> set{};
  constexpr BitTables() {
    for (uint32_t j = 0; j < kBlock; ++j) bit[j] = uint32_t{1} << j;
    for (uint32_t m = 0; m < 256; ++m) {
      uint32_t w = 0;
      for (uint32_t j = 0; j < 8; ++j)
        if (m >> j & 1) set[m][w++] = j;
    }
  }
};
constexpr BitTables kTables;

// Writes base + the set bits of the byte m to out[0, 8); the first popcount(m) are the answer.
inline uint32_t write_byte(uint32_t m, uint32_t base, uint32_t* out) {
  const uint32_t* set = kTables.set[m].data();
#pragma omp simd
  for (uint32_t j = 0; j < 8; ++j) out[j] = base + set[j];
  return static_cast<uint32_t>(std::popcount(m));
}

// Sums run in chunks of this many values (see norms), and collect works a chunk at a time.
constexpr size_t kChunk = 1024;

// hit(b, j) below tests position b + j, b a multiple of 16 and j < 16: the split lets the
// compiler see 16 consecutive loads. This is the 16-bit mask of a block's hits, vectorised.
template <class Hit>
inline uint32_t block_mask(const Hit& hit, size_t b) {
  uint32_t mask = 0;
#pragma omp simd reduction(| : mask)
  for (uint32_t j = 0; j < kBlock; ++j) mask |= kTables.bit[j] & (0u - static_cast<uint32_t>(hit(b, j)));
  return mask;
}

// The hit of a threshold t, |v| >= t. Magnitudes and t are below 2^31, so a signed compare
// (which SSE has) orders them.
struct AtLeast {
  const float* v;
  int32_t below;  // t - 1
  bool operator()(size_t b, uint32_t j) const { return static_cast<int32_t>(magnitude(v[b + j])) > below; }
};

#if defined(__SSE2__)
// With SSE2 the four compares of a block pack into one movemask: a third of the instructions
// of the generic block_mask, on the pass that every method makes.
inline uint32_t block_mask(const AtLeast& hit, size_t b) {
  const __m128i below = _mm_set1_epi32(hit.below), abs = _mm_set1_epi32(0x7fffffff);
  const auto above = [&](size_t j) {
    const __m128i bits = _mm_loadu_si128(reinterpret_cast<const __m128i*>(hit.v + b + j));
    return _mm_cmpgt_epi32(_mm_and_si128(bits, abs), below);
  };
  const __m128i low = _mm_packs_epi32(above(0), above(4)), high = _mm_packs_epi32(above(8), above(12));
  return static_cast<uint32_t>(_mm_movemask_epi8(_mm_packs_epi16(low, high)));
}
#endif

// Appends to out[w, ...) the positions i in [from, from + len) where hit(b, j), i = b + j; `out`
// must have room for len more. Returns the new w. Sparse: see collect.
template <bool Sparse, class Hit>
size_t collect_blocks(size_t from, size_t len, const Hit& hit, uint32_t* out, size_t w) {
  for (size_t i = from; i < from + len; i += kBlock) {
    const uint32_t mask = block_mask(hit, i);
    if (Sparse && mask == 0) continue;
    const auto base = static_cast<uint32_t>(i);
    const uint32_t low = write_byte(mask & 0xff, base, out + w);
    w += low + write_byte(mask >> 8, base + 8, out + w + low);
  }
  return w;
}

// Replaces `out` with the ascending positions i in [0, n) where hit(i - i % 16, i % 16), and
// with Mags `mag` with their |values[i]|, read a chunk at a time while the chunk is in L1.
// `sparse` (under one hit per 128 values expected) skips the blocks without a hit: that branch
// is predictable then, and costs more than the branch-free writes when hits are frequent. The
// vectors only grow their capacity, so repeated calls allocate nothing.
template <bool Mags, class Hit>
void collect(size_t n, bool sparse, const Hit& hit, std::vector<uint32_t>& out, const float* values = nullptr,
             std::vector<uint32_t>* mag = nullptr) {
  const auto room = [&](size_t need) {
    if (out.size() < need) out.resize(std::max(2 * out.size(), need));
  };
  const auto magnitudes = [&](size_t from, size_t to) {
    if constexpr (Mags) {
      mag->resize(out.size());
      for (size_t j = from; j < to; ++j) (*mag)[j] = magnitude(values[out[j]]);
    }
  };
  size_t w = 0;
  const size_t blocks_end = n / kBlock * kBlock;
  for (size_t i = 0; i < blocks_end; i += kChunk) {
    const size_t len = std::min(kChunk, blocks_end - i), before = w;
    room(w + len);
    w = sparse ? collect_blocks<true>(i, len, hit, out.data(), w) : collect_blocks<false>(i, len, hit, out.data(), w);
    magnitudes(before, w);
  }
  room(w + kBlock);
  const size_t before = w;
  for (size_t i = blocks_end; i < n; ++i) {
    out[w] = static_cast<uint32_t>(i);
    w += hit(blocks_end, static_cast<uint32_t>(i - blocks_end));
  }
  magnitudes(before, w);
  out.resize(w);
  if constexpr (Mags) mag->resize(w);
}

void gather_magnitudes(std::span<const float> values, std::span<const uint32_t> pos, std::vector<uint32_t>& mag) {
  mag.resize(pos.size());
  for (size_t j = 0; j < pos.size(); ++j) mag[j] = magnitude(values[pos[j]]);
}

// The positions of the values with |v| >= t, about `expected` of them; their magnitudes too
// when `mag` is given.
void keep_at_least(std::span<const float> values, uint32_t t, size_t expected, std::vector<uint32_t>& kept,
                   std::vector<uint32_t>* mag = nullptr) {
  const float* v = values.data();
  const size_t n = values.size();
  const AtLeast hit{v, static_cast<int32_t>(t) - 1};
  if (mag)
    collect<true>(n, expected * 128 < n, hit, kept, v, mag);
  else
    collect<false>(n, expected * 128 < n, hit, kept);
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

// What the exact selection works in; `state` draws its samples, which decide its speed only.
struct Scratch {
  std::vector<float> sample;
  std::vector<uint32_t> mag, tmp, pos;
  uint64_t state = 0x70b4;
};

// s values (s a multiple of 16, n >= 16) in s/16 runs of 16 consecutive values from random
// starts: a run costs one cache line, as a single random read would.
void draw_runs(std::span<const float> values, size_t s, uint64_t& state, std::vector<float>& out) {
  out.resize(s);
  for (size_t r = 0; r < s; r += kBlock) {
    const auto start = static_cast<size_t>(draw_below(state, values.size() - kBlock + 1));
    std::copy_n(values.begin() + static_cast<ptrdiff_t>(start), kBlock, out.begin() + static_cast<ptrdiff_t>(r));
  }
}

// The sample-threshold step of Floyd and Rivest's SELECT (CACM 18(3), 1975), one-sided: in a
// random sample of s values about k s / n belong to the k largest, so the r-th largest of the
// sample, r = k s/n + 3 sqrt(k s/n) + 3, keeps all of the k largest and c ~ k + 3 sqrt(k n/s)
// + 3 n/s values in all, with probability about 0.999. s = max(cbrt(2.25 k n), sqrt(3 n))
// balances s against the excess c - k. Leaves in `cand` the ascending positions of the values
// at or above that threshold, and their magnitudes in s.mag. Should the sample overshoot (fewer
// than k kept), r grows fourfold and the pass repeats; past r = s the threshold is 0, all n.
// Cost: s reads in runs, one pass over n, nth_element over s. 1 <= k < n.
void collect_candidates(std::span<const float> values, size_t k, Scratch& s, std::vector<uint32_t>& cand) {
  const size_t n = values.size();
  const auto kd = static_cast<double>(k), nd = static_cast<double>(n);
  const auto want = static_cast<size_t>(std::max(std::cbrt(2.25 * kd * nd), std::sqrt(3 * nd)));
  const size_t size = (want / kBlock + 1) * kBlock;
  if (size * 4 <= n) {
    draw_runs(values, size, s.state, s.sample);
    const double ks = kd * static_cast<double>(size) / nd;
    const auto by_magnitude = [](float a, float b) { return magnitude(a) > magnitude(b); };
    for (auto r = static_cast<size_t>(std::ceil(ks + 3 * std::sqrt(ks) + 3));; r *= 4) {
      uint32_t t = 0;
      if (r <= size) {
        std::nth_element(s.sample.begin(), s.sample.begin() + static_cast<ptrdiff_t>(r - 1), s.sample.end(),
                         by_magnitude);
        t = magnitude(s.sample[r - 1]);
      }
      keep_at_least(values, t, r * (n / size), cand, &s.mag);
      if (cand.size() >= k) return;
    }
  }
  keep_all(n, cand);
  gather_magnitudes(values, cand, s.mag);
}

// The k-th largest of `mag` (1 <= k <= its size) and how many values equal to it belong to the
// k largest, by most-significant-digit radix selection: for each byte from the top, a histogram
// of the values that share the bytes chosen so far picks the byte whose bucket holds the k-th.
// Every pass is branch-free and the subsets shrink fast, where nth_element mispredicts a branch
// on about every other value it partitions. Four interleaved histograms, so that runs of equal
// bytes do not queue on one counter. O(c) for c values, 4c scratch.
struct Kth {
  uint32_t value;
  size_t ties;
};

Kth kth_largest_radix(std::span<const uint32_t> mag, size_t k, std::vector<uint32_t>& tmp) {
  tmp.resize(mag.size());
  std::span<const uint32_t> cur = mag;
  uint32_t value = 0;
  for (int shift = 24;; shift -= 8) {
    std::array<std::array<uint32_t, 256>, 4> hist{};
    size_t i = 0;
    for (; i + 4 <= cur.size(); i += 4)
      for (size_t h = 0; h < 4; ++h) ++hist[h][cur[i + h] >> shift & 0xff];
    for (; i < cur.size(); ++i) ++hist[0][cur[i] >> shift & 0xff];
    uint32_t b = 255;
    for (;; --b) {
      const size_t in = size_t{hist[0][b]} + hist[1][b] + hist[2][b] + hist[3][b];
      if (in >= k) break;
      k -= in;
    }
    value |= b << shift;
    if (shift == 0) return {value, k};
    // In place once cur is tmp: the write index never passes the read index.
    size_t w = 0;
    for (const uint32_t m : cur) {
      tmp[w] = m;
      w += (m >> shift & 0xff) == b;
    }
    cur = std::span<const uint32_t>(tmp.data(), w);
  }
}

// Narrows the candidates `cand` (ascending, magnitudes in s.mag, holding the k largest values)
// to exactly the k largest, of those tied with the k-th the lowest positions. Returns the k-th
// magnitude: the threshold that reproduces the selection, ties aside.
uint32_t keep_top(size_t k, Scratch& s, std::vector<uint32_t>& cand) {
  auto [t, ties] = kth_largest_radix(s.mag, k, s.tmp);
  size_t w = 0;
  for (size_t j = 0; j < cand.size(); ++j) {
    const uint32_t m = s.mag[j];
    const bool tie = (m == t) & (ties > 0);
    ties -= tie;
    cand[w] = cand[j];
    w += (m > t) | tie;
  }
  cand.resize(w);
  return t;
}

// Exactly the k largest magnitudes, 1 <= k < n; see collect_candidates and keep_top.
uint32_t keep_exact(std::span<const float> values, size_t k, Scratch& s, std::vector<uint32_t>& kept) {
  collect_candidates(values, k, s, kept);
  return keep_top(k, s, kept);
}

// The k-th largest magnitude, 1 <= k < n.
uint32_t kth_largest(std::span<const float> values, size_t k, Scratch& s) {
  collect_candidates(values, k, s, s.pos);
  return kth_largest_radix(s.mag, k, s.tmp).value;
}

// Keeps what threshold `t` keeps if its count lies in `band`, else exactly the k largest:
// from what t kept when that is too many (and few enough that selecting among them beats a
// fresh pass), else by keep_exact. Returns the threshold used. The usual case is one pass.
uint32_t keep_in_band(std::span<const float> values, size_t k, uint32_t t, Band band, Scratch& s,
                      std::vector<uint32_t>& kept) {
  keep_at_least(values, t, k, kept);
  if (band.holds(kept.size())) return t;
  if (kept.size() > band.hi && kept.size() * 8 < values.size()) {
    gather_magnitudes(values, kept, s.mag);
    return keep_top(k, s, kept);
  }
  return keep_exact(values, k, s, kept);
}

// Sums over the values run in 16 float lanes per chunk of 1024 values, the chunk sums in double:
// vectorised (a single double sum is one serial chain), and within about 1e-6 relative of the
// double sum, ample for a fitted normal's parameters and approx's norms.
double sum_lanes(const std::array<float, kBlock>& lane) {
  double s = 0;
  for (float x : lane) s += x;
  return s;
}

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

// exact: the k largest magnitudes, ties broken towards lower positions. A sample's threshold
// picks a few more than k candidates in one pass, a radix selection over their magnitudes
// finds the k-th, and a walk over them keeps the k (collect_candidates, keep_top). O(n)
// expected, one pass when the sample is right (a pass more, rarely, when not); scratch for the
// candidates, a little over k unless ties crowd the k-th.
class ExactSelector final : public TopkSelector {
 public:
  void select(std::span<const float> values, size_t k, std::vector<uint32_t>& kept) override {
    if (!trivial(values.size(), k, kept)) keep_exact(values, k, scratch_, kept);
  }

 private:
  Scratch scratch_;
};

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

// threshold-reuse (Ok-Topk, Li and Hoefler 2022, section 3.1.3): gradients change slowly, so
// the exact threshold (the k-th magnitude) is computed every T calls (tau', default 32 as in
// their VGG-16 and LSTM runs) and reused between. A reused threshold whose count has drifted
// out of [2k/3, 5k/4] is replaced by this call's exact threshold (keep_in_band), kept for the
// next calls. Cost: the exact selection once per T calls, one pass otherwise, about one more
// after drift.
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
  void save_state(StateWriter& out) const override {
    out.put(step_);
    out.put(threshold_.has_value());
    out.put(threshold_.value_or(0));
  }
  void load_state(StateReader& in) override {
    step_ = in.get<uint64_t>();
    const bool has = in.get<bool>();
    const auto t = in.get<uint32_t>();
    threshold_ = has ? std::optional<uint32_t>(t) : std::nullopt;
  }

 private:
  uint32_t period_;
  uint64_t step_ = 0;
  std::optional<uint32_t> threshold_;
  Scratch scratch_;
};

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

// sampled (Marian's gradient dropping, Neckermann 2017 section 3.8, after Aji and Heafield
// 2017): the threshold is the k s / n -th magnitude of s values drawn at random, in runs of 16
// consecutive values (draw_runs: a run costs what one random read does). s is chosen so that
// about 256 sampled values lie above the threshold, which puts the count within ~6% of k (one
// standard deviation, if values are not correlated within a run), and at least 1024; once that
// is n or more the selection is exact. Then, as for gaussian, the count is held in
// [3k/4, 5k/4]. Cost: s reads in runs, the exact selection within the sample (a pass over s),
// one pass over n.
class SampledSelector final : public TopkSelector {
 public:
  static constexpr size_t kMinSample = 1024, kHitsInSample = 256;

  explicit SampledSelector(uint64_t seed) : state_(seed) {}

  void select(std::span<const float> values, size_t k, std::vector<uint32_t>& kept) override {
    const size_t n = values.size();
    if (trivial(n, k, kept)) return;
    const size_t want = std::max(kMinSample, (kHitsInSample * n + k - 1) / k);
    const size_t s = (want + kBlock - 1) / kBlock * kBlock;
    if (s >= n) {
      keep_exact(values, k, scratch_, kept);
      return;
    }
    draw_runs(values, s, state_, sample_);
    const size_t ks = std::max<size_t>(1, (k * s + n / 2) / n);
    const uint32_t t = kth_largest(sample_, ks, scratch_);
    keep_in_band(values, k, t, Band::of(k, 3, 4, 5, 4), scratch_, kept);
  }
  void save_state(StateWriter& out) const override { out.put(state_); }
  void load_state(StateReader& in) override { state_ = in.get<uint64_t>(); }

 private:
  uint64_t state_;
  std::vector<float> sample_;
  Scratch scratch_;
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
  throw std::invalid_argument("unknown top-k selection '" + std::string(name) + "' (known: " + names_of(kNames) + ")");
}

void split_selected(const SparseVector& in, std::span<const uint32_t> kept, SparseVector& sent,
                    SparseVector& residual) {
  // The kept pairs are a few percent of `in`: the runs between them are copied whole,
  // several times faster than choosing a destination per pair, and this copy of the
  // residual is part of every top-k step (docs/performance.md#figures-behind-the-code).
  const size_t n = in.nnz(), nk = kept.size();
  sent.index.resize(nk);
  sent.value.resize(nk);
  residual.index.resize(n - nk);
  residual.value.resize(n - nk);
  size_t from = 0, to = 0;
  auto copy_run = [&](size_t end) {
    std::copy(in.index.begin() + from, in.index.begin() + end, residual.index.begin() + to);
    std::copy(in.value.begin() + from, in.value.begin() + end, residual.value.begin() + to);
    to += end - from;
  };
  for (size_t q = 0; q < nk; ++q) {
    const size_t p = kept[q];
    copy_run(p);
    sent.index[q] = in.index[p];
    sent.value[q] = in.value[p];
    from = p + 1;
  }
  copy_run(n);
}

}  // namespace mpisgd
