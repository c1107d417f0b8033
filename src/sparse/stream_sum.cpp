#include "sparse/stream_sum.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <type_traits>

namespace mpisgd {
namespace {

// dense[index - offset] += value for every pair.
template <class V>
void scatter_add(std::span<const Pair<V>> pairs, uint32_t offset, V* __restrict dense) {
  for (const Pair<V>& p : pairs) dense[p.index - offset] += p.value;
}

template <class V>
void add_dense(V* __restrict acc, const V* __restrict in, size_t n) {
#pragma omp simd
  for (size_t i = 0; i < n; ++i) acc[i] += in[i];
}

// One two-pointer merge of ascending pairs into `out`. Which side advances is as good as
// random for two gradients' indices, so the choice is made with masks, not branches: 3.5
// ns an item against 4.5 with a branch a pair, on fresh pairs of 2,500-5,000 random
// indices a side over 1.6M. A ternary lets g++ bring the branches back. A lone value is
// selected, not added to zero, so its bits (a -0.0 among them) are kept.
template <class V>
struct MergeChain {
  const Pair<V>* a;
  const Pair<V>* a_end;
  const Pair<V>* b;
  const Pair<V>* b_end;
  Pair<V>* out;

  bool both() const { return a < a_end && b < b_end; }

  [[gnu::always_inline]] void step() {
    using Bits = std::conditional_t<sizeof(V) == 4, uint32_t, uint64_t>;
    const Pair<V> x = *a, y = *b;
    const bool take_a = x.index <= y.index, take_b = y.index <= x.index;
    const Bits ma = Bits{0} - take_a, mb = Bits{0} - take_b;
    const Bits sum = std::bit_cast<Bits>(static_cast<V>(x.value + y.value));
    const Bits value =
        (sum & ma & mb) | (std::bit_cast<Bits>(x.value) & ma & ~mb) | (std::bit_cast<Bits>(y.value) & mb & ~ma);
    const uint32_t ia = static_cast<uint32_t>(ma);
    *out++ = Pair<V>{(x.index & ia) | (y.index & ~ia), std::bit_cast<V>(value)};
    a += take_a;
    b += take_b;
  }

  // Merges what is left; returns the end of the output.
  Pair<V>* finish() {
    while (both()) step();
    out = std::copy(a, a_end, out);
    return std::copy(b, b_end, out);
  }
};

// Below this many pairs on either side, one chain merges.
constexpr size_t kTwoChainPairs = 64;

// Merge of ascending pairs, equal indices summed; returns the number written to `out`,
// which has room for a.size() + b.size(). A chain's next choice waits on its last one's
// loads, so two chains run side by side, on the pairs below a's middle index and on the
// rest: 2.4-2.8 ns an item against 3.4-3.8 for one (summation_bench, fresh pairs, 1,600
// to 800,000 a side), the output the same bits. The upper chain writes past the lower's longest output, and
// the gap that indices in both leave is closed once.
template <class V>
uint32_t merge(std::span<const Pair<V>> a, std::span<const Pair<V>> b, Pair<V>* __restrict out) {
  if (a.size() < kTwoChainPairs || b.size() < kTwoChainPairs) {
    MergeChain<V> one{a.data(), a.data() + a.size(), b.data(), b.data() + b.size(), out};
    return static_cast<uint32_t>(one.finish() - out);
  }
  const size_t half_a = a.size() / 2;
  const auto below = [](const Pair<V>& p, uint32_t i) { return p.index < i; };
  const size_t half_b = static_cast<size_t>(std::lower_bound(b.begin(), b.end(), a[half_a].index, below) - b.begin());
  Pair<V>* upper = out + half_a + half_b;
  MergeChain<V> lo{a.data(), a.data() + half_a, b.data(), b.data() + half_b, out};
  MergeChain<V> hi{a.data() + half_a, a.data() + a.size(), b.data() + half_b, b.data() + b.size(), upper};
  while (lo.both() && hi.both()) {
    lo.step();
    hi.step();
  }
  Pair<V>* lo_end = lo.finish();
  const size_t upper_count = static_cast<size_t>(hi.finish() - upper);
  if (lo_end != upper) std::memmove(lo_end, upper, upper_count * sizeof(Pair<V>));
  return static_cast<uint32_t>(static_cast<size_t>(lo_end - out) + upper_count);
}

}  // namespace

template <class V>
void encode(std::span<const uint32_t> index, std::span<const V> value, Range range, const DenseSwitch& sw,
            Stream<V>& out) {
  out.reserve(range.length());
  if (index.size() > sw.switch_count<V>(range.length())) {
    out.set_zero_dense(range.length());
    V* dense = out.values().data();
    for (size_t j = 0; j < index.size(); ++j) dense[index[j] - range.begin] = value[j];
    return;
  }
  out.set_sparse(static_cast<uint32_t>(index.size()));
  Pair<V>* pairs = out.pairs().data();
  for (size_t j = 0; j < index.size(); ++j) pairs[j] = Pair<V>{index[j], value[j]};
}

template <class V>
const Stream<V>& switched(const Stream<V>& in, Range range, const DenseSwitch& sw, Stream<V>& dense) {
  if (in.is_dense() || in.count() <= sw.switch_count<V>(range.length())) return in;
  dense.reserve(range.length());
  dense.set_zero_dense(range.length());
  V* values = dense.values().data();
  for (const Pair<V>& p : in.pairs()) values[p.index - range.begin] = p.value;
  return dense;
}

template <class V>
void extract(StreamView<V> in, Range whole, Range part, const DenseSwitch& sw, Stream<V>& out) {
  out.reserve(part.length());
  if (in.is_dense()) {
    out.set_dense(part.length());
    std::memcpy(out.values().data(), in.values().data() + (part.begin - whole.begin), part.length() * sizeof(V));
    return;
  }
  const std::span<const Pair<V>> inside = in.pairs_in(part);
  const auto n = static_cast<uint32_t>(inside.size());
  if (n > sw.switch_count<V>(part.length())) {
    out.set_zero_dense(part.length());
    scatter_add(inside, part.begin, out.values().data());
  } else {
    out.set_sparse(n);
    std::memcpy(out.pairs().data(), inside.data(), n * sizeof(Pair<V>));
  }
}

template <class V>
void write_dense(const Stream<V>& in, Range range, V* out) {
  if (in.is_dense()) {
    // copy_n, not memcpy: `out` may be null for an empty range (an empty std::vector).
    std::copy_n(in.values().data(), range.length(), out);
    return;
  }
  std::fill_n(out, range.length(), V{0});
  scatter_add(in.pairs(), range.begin, out);
}

template <class V>
void densify(const Stream<V>& in, Range range, Stream<V>& out) {
  out.reserve(range.length());
  out.set_dense(range.length());
  write_dense(in, range, out.values().data());
}

template <class V>
void add_overlapping(Stream<V>& acc, Stream<V>& in, Stream<V>& scratch, Range range, const DenseSwitch& sw) {
  const uint32_t n = range.length();
  if (acc.is_dense() && in.is_dense()) {  // 1.b: SIMD addition in place
    add_dense(acc.values().data(), in.values().data(), n);
  } else if (acc.is_dense()) {  // 1.c: scatter the pairs in place
    scatter_add(std::span<const Pair<V>>(in.pairs()), range.begin, acc.values().data());
  } else if (in.is_dense()) {  // 1.d: the dense side is in's buffer; add acc into it
    scatter_add(std::span<const Pair<V>>(acc.pairs()), range.begin, in.values().data());
    acc.swap(in);
  } else {  // 1.a: merge; the union is at most |a| + |b|, so merge sparse when that fits
    const uint64_t bound = uint64_t{acc.count()} + in.count();
    scratch.reserve(n);
    if (Stream<V>::sparse_bytes(bound) <= scratch.capacity()) {
      scratch.set_sparse(merge<V>(acc.pairs(), in.pairs(), scratch.pairs().data()));
      if (scratch.count() > sw.switch_count<V>(n)) {
        densify(scratch, range, acc);
      } else {
        acc.swap(scratch);
      }
    } else {
      scratch.set_zero_dense(n);
      scatter_add(std::span<const Pair<V>>(acc.pairs()), range.begin, scratch.values().data());
      scatter_add(std::span<const Pair<V>>(in.pairs()), range.begin, scratch.values().data());
      acc.swap(scratch);
    }
  }
}

template <class V>
void compact(const Stream<V>& in, Range range, Stream<V>& out) {
  out.reserve(range.length());
  if (!in.is_dense()) {
    out.copy_from(in);
    return;
  }
  const uint64_t limit = kByteBound.switch_count<V>(range.length());
  out.set_sparse(static_cast<uint32_t>(limit));
  Pair<V>* pairs = out.pairs().data();
  const V* values = in.values().data();
  uint32_t n = 0;
  for (uint32_t i = 0; i < range.length(); ++i) {
    if (values[i] == V{0}) continue;
    if (n == limit) {
      out.copy_from(in);
      return;
    }
    pairs[n++] = Pair<V>{range.begin + i, values[i]};
  }
  out.set_sparse(n);
}

template <class V>
void concat_disjoint(Stream<V>& lower, StreamView<V> upper, Range lower_range, Range upper_range, Stream<V>& scratch) {
  const Range joined{lower_range.begin, upper_range.end};
  lower.reserve(joined.length());
  if (!lower.is_dense() && !upper.is_dense()) {
    const uint64_t total = uint64_t{lower.count()} + upper.count();
    if (total <= kByteBound.switch_count<V>(joined.length())) {  // 2.a: append the upper pairs
      const uint32_t had = lower.count();
      lower.set_sparse(static_cast<uint32_t>(total));
      std::memcpy(lower.pairs().data() + had, upper.pairs().data(), upper.count() * sizeof(Pair<V>));
      return;
    }
    scratch.reserve(joined.length());
    scratch.set_zero_dense(joined.length());
    scatter_add(std::span<const Pair<V>>(lower.pairs()), joined.begin, scratch.values().data());
    scatter_add(upper.pairs(), joined.begin, scratch.values().data());
    lower.swap(scratch);
    return;
  }
  if (lower.is_dense()) {  // 2.b / 2.c: extend the dense lower part in place
    lower.set_dense(joined.length());
    V* tail = lower.values().data() + lower_range.length();
    if (upper.is_dense()) {
      std::memcpy(tail, upper.values().data(), upper_range.length() * sizeof(V));
    } else {
      std::fill_n(tail, upper_range.length(), V{0});
      scatter_add(upper.pairs(), upper_range.begin, tail);
    }
    return;
  }
  // 2.d: sparse lower, dense upper: the dense result needs a fresh buffer
  scratch.reserve(joined.length());
  scratch.set_zero_dense(joined.length());
  scatter_add(std::span<const Pair<V>>(lower.pairs()), joined.begin, scratch.values().data());
  std::memcpy(scratch.values().data() + lower_range.length(), upper.values().data(),
              upper_range.length() * sizeof(V));
  lower.swap(scratch);
}

template <class V>
uint64_t nonzeros(const Stream<V>& s) {
  if (!s.is_dense()) return s.count();
  uint64_t n = 0;
  for (V v : s.values()) n += v != V{0};
  return n;
}

#define MPISGD_STREAM_SUM(V)                                                                                    \
  template void encode<V>(std::span<const uint32_t>, std::span<const V>, Range, const DenseSwitch&, Stream<V>&); \
  template const Stream<V>& switched<V>(const Stream<V>&, Range, const DenseSwitch&, Stream<V>&);                \
  template void extract<V>(StreamView<V>, Range, Range, const DenseSwitch&, Stream<V>&);                        \
  template void write_dense<V>(const Stream<V>&, Range, V*);                                                     \
  template void densify<V>(const Stream<V>&, Range, Stream<V>&);                                                 \
  template void add_overlapping<V>(Stream<V>&, Stream<V>&, Stream<V>&, Range, const DenseSwitch&);              \
  template void compact<V>(const Stream<V>&, Range, Stream<V>&);                                                 \
  template void concat_disjoint<V>(Stream<V>&, StreamView<V>, Range, Range, Stream<V>&);                         \
  template uint64_t nonzeros<V>(const Stream<V>&);
MPISGD_STREAM_SUM(float)
MPISGD_STREAM_SUM(double)
#undef MPISGD_STREAM_SUM

}  // namespace mpisgd
