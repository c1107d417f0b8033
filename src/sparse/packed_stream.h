#pragma once
// The wire form of a Stream (sparse/stream.h) whose indices come in runs. A K-class model
// keeps a feature's K weights in consecutive slots (model/weights.h), so its updates are
// runs of K indices, and as (index, value) pairs a feature costs K (4 + sizeof(V)) bytes
// where a run's 8-byte head and K sizeof(V) do: at K = 10, 80 bytes against 48. Packed, a
// sparse stream crosses as
//
//   [uint32 count][uint32 kRuns] then runs: [uint32 first][uint32 length][length values]
//
// (count: the pairs the runs hold), which costs 8 bytes a run and sizeof(V) a value. A
// stream is packed only when that is smaller than its pairs; otherwise, and for a dense
// stream, the wire carries the stream's own bytes, whose header already says which form
// it is. Unpacking gives back the stream that was packed, bit for bit.
#include <cstddef>
#include <cstdint>
#include <span>

#include "data/big_array.h"
#include "sparse/stream.h"

namespace mpisgd {

// Bytes of `pairs` (indices ascending) as runs, without the stream header.
template <class V>
size_t runs_bytes(std::span<const Pair<V>> pairs);
// Writes `pairs` as runs at `out` (room for runs_bytes(pairs)); returns the bytes written.
template <class V>
size_t write_runs(std::span<const Pair<V>> pairs, std::byte* out);
// Reads `bytes` of runs at `in` into `out` (room for every pair they hold); returns the
// number of pairs. Throws std::runtime_error for runs that overrun `bytes`.
template <class V>
size_t read_runs(const std::byte* in, size_t bytes, Pair<V>* out);

// The wire form of `pairs` (indices ascending) as a block of its own: the stream header,
// then the runs where they are smaller, else the pairs. The bytes it takes; writes them.
template <class V>
size_t packed_bytes(std::span<const Pair<V>> pairs);
template <class V>
size_t write_packed(std::span<const Pair<V>> pairs, std::byte* out);
// The stream a block of `bytes` at `block` describes (packed, or a stream's own bytes),
// into `s`. Throws std::runtime_error for a block its header does not describe.
template <class V>
void read_packed(const std::byte* block, size_t bytes, Stream<V>& s);
// The pairs of a sparse block (write_packed's) into `out`, which has room for the count
// its header gives; returns that count.
template <class V>
size_t read_packed_pairs(const std::byte* block, size_t bytes, Pair<V>* out);

// Packs streams for sending and unpacks them where they arrive: a stream is received
// into its own buffer (a packed stream is never larger than the pairs it holds), so dense
// streams and streams sent as pairs cost no copy at either end.
template <class V>
class PackedStream {
 public:
  static constexpr uint32_t kRuns = 2;  // the header's form word; a Stream's are 0 and 1

  // The bytes to send for `s`: its runs, packed here, where they are smaller than its
  // pairs; otherwise s's own bytes. Valid while `s` and this object are unchanged.
  std::span<const std::byte> wire(const Stream<V>& s);
  // Makes `s`, which received `received` bytes that wire() gave, the stream they came
  // from. Throws std::runtime_error for bytes whose header does not describe them.
  void unpack(Stream<V>& s, size_t received);

 private:
  BigArray<std::byte> buf_;
};

}  // namespace mpisgd
