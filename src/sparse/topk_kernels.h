#pragma once
// The kernels the top-k selections (topk_select.h) share. All of them compare magnitudes
// as the bits of |v|: the bits of non-negative floats order as the floats do, so a
// threshold is a uint32 and the hot loops are integer compares. A threshold t keeps every
// value with |v| >= t. Inputs are NaN-free (a gradient holding a NaN has diverged before
// it is sparsified).
//
// Every pass over the n values runs near the speed of reading them (collect below): a
// block of 16 values is compared in one vectorised step into a bit mask, and the positions
// of its set bits are written from a table, with no branch per value. A selection is one
// or two such passes plus work on the few values it keeps: never a sort, nor a copy of
// all n. Header-only, so that each selection's passes inline these as they did in one file.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "sparse/random.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace mpisgd::topk {

inline uint32_t magnitude(float v) { return std::bit_cast<uint32_t>(v) & 0x7fffffffu; }

inline constexpr size_t kBlock = 16;

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
inline constexpr BitTables kTables;

// Writes base + the set bits of the byte m to out[0, 8); the first popcount(m) are the answer.
inline uint32_t write_byte(uint32_t m, uint32_t base, uint32_t* out) {
  const uint32_t* set = kTables.set[m].data();
#pragma omp simd
  for (uint32_t j = 0; j < 8; ++j) out[j] = base + set[j];
  return static_cast<uint32_t>(std::popcount(m));
}

// Sums run in chunks of this many values (see norms), and collect works a chunk at a time.
inline constexpr size_t kChunk = 1024;

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
inline size_t collect_blocks(size_t from, size_t len, const Hit& hit, uint32_t* out, size_t w) {
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
inline void collect(size_t n, bool sparse, const Hit& hit, std::vector<uint32_t>& out, const float* values = nullptr,
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

inline void gather_magnitudes(std::span<const float> values, std::span<const uint32_t> pos, std::vector<uint32_t>& mag) {
  mag.resize(pos.size());
  for (size_t j = 0; j < pos.size(); ++j) mag[j] = magnitude(values[pos[j]]);
}

// The positions of the values with |v| >= t, about `expected` of them; their magnitudes too
// when `mag` is given.
inline void keep_at_least(std::span<const float> values, uint32_t t, size_t expected, std::vector<uint32_t>& kept,
                   std::vector<uint32_t>* mag = nullptr) {
  const float* v = values.data();
  const size_t n = values.size();
  const AtLeast hit{v, static_cast<int32_t>(t) - 1};
  if (mag)
    collect<true>(n, expected * 128 < n, hit, kept, v, mag);
  else
    collect<false>(n, expected * 128 < n, hit, kept);
}

inline void keep_all(size_t n, std::vector<uint32_t>& kept) {
  kept.resize(n);
  for (size_t i = 0; i < n; ++i) kept[i] = static_cast<uint32_t>(i);
}

// Handles the cases every method shares; true when `kept` is already the answer.
inline bool trivial(size_t n, size_t k, std::vector<uint32_t>& kept) {
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
inline void draw_runs(std::span<const float> values, size_t s, uint64_t& state, std::vector<float>& out) {
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
inline void collect_candidates(std::span<const float> values, size_t k, Scratch& s, std::vector<uint32_t>& cand) {
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

inline Kth kth_largest_radix(std::span<const uint32_t> mag, size_t k, std::vector<uint32_t>& tmp) {
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
inline uint32_t keep_top(size_t k, Scratch& s, std::vector<uint32_t>& cand) {
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
inline uint32_t keep_exact(std::span<const float> values, size_t k, Scratch& s, std::vector<uint32_t>& kept) {
  collect_candidates(values, k, s, kept);
  return keep_top(k, s, kept);
}

// The k-th largest magnitude, 1 <= k < n.
inline uint32_t kth_largest(std::span<const float> values, size_t k, Scratch& s) {
  collect_candidates(values, k, s, s.pos);
  return kth_largest_radix(s.mag, k, s.tmp).value;
}

// Keeps what threshold `t` keeps if its count lies in `band`, else exactly the k largest:
// from what t kept when that is too many (and few enough that selecting among them beats a
// fresh pass), else by keep_exact. Returns the threshold used. The usual case is one pass.
inline uint32_t keep_in_band(std::span<const float> values, size_t k, uint32_t t, Band band, Scratch& s,
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
inline double sum_lanes(const std::array<float, kBlock>& lane) {
  double s = 0;
  for (float x : lane) s += x;
  return s;
}

}  // namespace mpisgd::topk
