#pragma once
// The sparse vector stream the collectives send and sum (thesis section 4.1.1-4.1.2): one
// contiguous, 8-byte aligned block that MPI sends as it is,
//
//   [uint32 count][uint32 dense] then count (index, value) pairs, indices ascending,
//                                or   count values (dense: count = length of the range)
//
// over an index range [begin, end) that the algorithm knows, so it never travels. The
// explicit flag replaces the thesis' "nofitems == dim" test, which cannot tell an empty
// range from an empty vector. A stream switches itself to dense once its pairs would
// exceed `switch_count(length)` (see DenseSwitch): then it is cheaper to send dense, or to
// sum dense. Its buffer always has room for the dense form, so no operation allocates
// while the algorithm runs; it is left unwritten, so that only the pages a stream uses
// are ever mapped: zero-filling the dense-sized streams an algorithm keeps is what
// `auto`, making an algorithm on its first use, would pay inside the first epoch.
#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "data/big_array.h"
#include "sparse/range.h"

namespace mpisgd {

// Packed so that a double stream sends 12 bytes a pair, not 16.
template <class V>
struct [[gnu::packed]] Pair {
  uint32_t index;
  V value;
};

// Where a stream goes dense. The byte bound phi(n) = floor(n sizeof(V) / sizeof(Pair)) is
// the thesis' (section 4.1.2); the density bound is where sparse summation becomes slower
// than dense addition, measured by apps/summation_bench: 2.6-3% at N = 1M-3.2M, 3-7% at
// 16M (thesis section 5.2.5: 6.25%; README "Summation kernel"). That is the right switch
// on a fast network; on a slow one the bytes matter more and the switch belongs near the
// byte bound, which is where the `auto` collective puts it (cost_model.h).
struct DenseSwitch {
  static constexpr double kMeasuredDensity = 0.03;
  double density = kMeasuredDensity;

  template <class V>
  uint64_t switch_count(uint64_t length) const {
    uint64_t by_bytes = length * sizeof(V) / sizeof(Pair<V>);
    auto by_speed = static_cast<uint64_t>(density * static_cast<double>(length));
    return std::min(by_bytes, by_speed);
  }
};

// The switch of a stream that is not summed again (an allgather's blocks): only the
// bytes decide.
inline constexpr DenseSwitch kByteBound{1.0};

// A stream's block read where it lies, without owning it: in another rank's slot of a
// shared-memory window (comm/shared_slots.h), or in a Stream.
template <class V>
class StreamView {
 public:
  explicit StreamView(const void* block) : block_(static_cast<const std::byte*>(block)) {}

  uint32_t count() const { return header()[0]; }
  bool is_dense() const { return header()[1] != 0; }
  size_t bytes() const { return kHeaderBytes + count() * (is_dense() ? sizeof(V) : sizeof(Pair<V>)); }
  std::span<const Pair<V>> pairs() const {
    return {reinterpret_cast<const Pair<V>*>(block_ + kHeaderBytes), is_dense() ? 0 : count()};
  }
  std::span<const V> values() const {
    return {reinterpret_cast<const V*>(block_ + kHeaderBytes), is_dense() ? count() : 0};
  }
  // The pairs whose indices fall in `range`, found by binary search (empty when dense).
  std::span<const Pair<V>> pairs_in(Range range) const {
    const auto all = pairs();
    const auto by_index = [](const Pair<V>& p, uint32_t i) { return p.index < i; };
    const auto first = std::lower_bound(all.begin(), all.end(), range.begin, by_index);
    return {first, std::lower_bound(first, all.end(), range.end, by_index)};
  }
  const void* data() const { return block_; }

  static constexpr size_t kHeaderBytes = 8;

 private:
  const uint32_t* header() const { return reinterpret_cast<const uint32_t*>(block_); }
  const std::byte* block_;
};

template <class V>
class Stream {
 public:
  static constexpr size_t kHeaderBytes = StreamView<V>::kHeaderBytes;

  // Bytes a stream of `count` items takes on the wire.
  static size_t sparse_bytes(uint64_t count) { return kHeaderBytes + count * sizeof(Pair<V>); }
  static size_t dense_bytes(uint64_t length) { return kHeaderBytes + length * sizeof(V); }
  // Room for any stream over `length` indices; sparse ones never outgrow the dense form.
  static size_t capacity_bytes(uint64_t length) { return dense_bytes(length); }

  Stream() : Stream(0) {}
  explicit Stream(uint64_t max_length) {
    reserve(max_length);
    set_empty();
  }

  // Makes room for streams over up to `max_length` indices; keeps the contents.
  void reserve(uint64_t max_length) { grow_to(capacity_bytes(max_length)); }
  // Makes room for `count` pairs, however many: past the byte bound they take more than
  // the dense form (a gradient before its dense switch, a top-k selection).
  void reserve_pairs(uint64_t count) { grow_to(sparse_bytes(count)); }
  size_t capacity() const { return buf_.size() * 8; }

  uint32_t count() const { return header()[0]; }
  bool is_dense() const { return header()[1] != 0; }
  // Bytes on the wire; count() is the number of items sent, pairs or dense values.
  size_t bytes() const { return is_dense() ? dense_bytes(count()) : sparse_bytes(count()); }

  std::span<Pair<V>> pairs() { return {reinterpret_cast<Pair<V>*>(payload()), is_dense() ? 0 : count()}; }
  std::span<const Pair<V>> pairs() const {
    return {reinterpret_cast<const Pair<V>*>(payload()), is_dense() ? 0 : count()};
  }
  std::span<V> values() { return {reinterpret_cast<V*>(payload()), is_dense() ? count() : 0}; }
  std::span<const V> values() const { return {reinterpret_cast<const V*>(payload()), is_dense() ? count() : 0}; }

  void set_sparse(uint32_t count) {
    assert(sparse_bytes(count) <= capacity());
    header()[0] = count;
    header()[1] = 0;
  }
  void set_dense(uint32_t length) {
    assert(dense_bytes(length) <= capacity());
    header()[0] = length;
    header()[1] = 1;
  }
  void set_empty() { set_sparse(0); }
  // A dense stream of zeros over `length` indices.
  void set_zero_dense(uint32_t length) {
    set_dense(length);
    std::fill_n(reinterpret_cast<V*>(payload()), length, V{0});
  }

  // Raw block for MPI: send bytes() from data(), receive up to capacity() into data().
  void* data() { return buf_.data(); }
  const void* data() const { return buf_.data(); }

  StreamView<V> view() const { return StreamView<V>(buf_.data()); }

  void copy_from(StreamView<V> other) {
    size_t n = other.bytes();
    if (n > capacity()) buf_.resize((n + 7) / 8);
    std::memcpy(buf_.data(), other.data(), n);
  }
  void copy_from(const Stream& other) { copy_from(other.view()); }

  void swap(Stream& other) noexcept { buf_.swap(other.buf_); }

 private:
  uint32_t* header() { return reinterpret_cast<uint32_t*>(buf_.data()); }
  const uint32_t* header() const { return reinterpret_cast<const uint32_t*>(buf_.data()); }
  std::byte* payload() { return reinterpret_cast<std::byte*>(buf_.data()) + kHeaderBytes; }
  const std::byte* payload() const { return reinterpret_cast<const std::byte*>(buf_.data()) + kHeaderBytes; }
  void grow_to(size_t bytes) {
    size_t words = (bytes + 7) / 8;
    if (words > buf_.size()) buf_.resize(words);
  }

  HugeTailArray<uint64_t> buf_;  // 64-bit words keep the block 8-byte aligned for doubles
};

}  // namespace mpisgd
