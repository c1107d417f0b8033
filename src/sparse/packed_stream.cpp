#include "sparse/packed_stream.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

namespace mpisgd {
namespace {

// Where the run that starts at pairs[i] ends.
template <class V>
size_t run_end(std::span<const Pair<V>> pairs, size_t i) {
  size_t j = i + 1;
  while (j < pairs.size() && pairs[j].index == pairs[j - 1].index + 1) ++j;
  return j;
}

std::runtime_error bad_block(const std::string& why) {
  return std::runtime_error("packed stream: " + why);
}

}  // namespace

template <class V>
size_t runs_bytes(std::span<const Pair<V>> pairs) {
  size_t runs = 0;
  for (size_t i = 0; i < pairs.size(); i = run_end(pairs, i)) ++runs;
  return runs * 2 * sizeof(uint32_t) + pairs.size() * sizeof(V);
}

template <class V>
size_t write_runs(std::span<const Pair<V>> pairs, std::byte* out) {
  std::byte* at = out;
  for (size_t i = 0, end; i < pairs.size(); i = end) {
    end = run_end(pairs, i);
    const uint32_t head[2] = {pairs[i].index, static_cast<uint32_t>(end - i)};
    std::memcpy(at, head, sizeof head);
    at += sizeof head;
    for (size_t j = i; j < end; ++j, at += sizeof(V)) std::memcpy(at, &pairs[j].value, sizeof(V));
  }
  return static_cast<size_t>(at - out);
}

template <class V>
size_t read_runs(const std::byte* in, size_t bytes, Pair<V>* out) {
  size_t at = 0, n = 0;
  while (at < bytes) {
    uint32_t head[2];
    if (bytes - at < sizeof head) throw bad_block("a run's header is cut off");
    std::memcpy(head, in + at, sizeof head);
    at += sizeof head;
    if (head[1] == 0 || (bytes - at) / sizeof(V) < head[1]) throw bad_block("a run is longer than the block");
    if (head[0] > UINT32_MAX - (head[1] - 1)) throw bad_block("a run passes index 2^32 - 1");
    for (uint32_t j = 0; j < head[1]; ++j, at += sizeof(V)) {
      out[n].index = head[0] + j;
      std::memcpy(&out[n++].value, in + at, sizeof(V));
    }
  }
  return n;
}

template <class V>
size_t packed_bytes(std::span<const Pair<V>> pairs) {
  return Stream<V>::kHeaderBytes + std::min(runs_bytes(pairs), pairs.size_bytes());
}

template <class V>
size_t write_packed(std::span<const Pair<V>> pairs, std::byte* out) {
  const size_t runs = runs_bytes(pairs);
  const bool packed = runs < pairs.size_bytes();
  const uint32_t header[2] = {static_cast<uint32_t>(pairs.size()), packed ? PackedStream<V>::kRuns : 0};
  std::memcpy(out, header, sizeof header);
  if (packed) return sizeof header + write_runs(pairs, out + sizeof header);
  if (!pairs.empty()) std::memcpy(out + sizeof header, pairs.data(), pairs.size_bytes());
  return sizeof header + pairs.size_bytes();
}

template <class V>
size_t read_packed_pairs(const std::byte* block, size_t bytes, Pair<V>* out) {
  if (bytes < Stream<V>::kHeaderBytes) throw bad_block(std::to_string(bytes) + " bytes, shorter than a header");
  uint32_t header[2];
  std::memcpy(header, block, sizeof header);
  const uint32_t count = header[0], form = header[1];
  if (form == PackedStream<V>::kRuns) {
    const size_t n = read_runs(block + sizeof header, bytes - sizeof header, out);
    if (n != count) throw bad_block("runs of " + std::to_string(n) + " pairs, header says " + std::to_string(count));
    return n;
  }
  if (form != 0) throw bad_block("form " + std::to_string(form) + " where pairs were expected");
  if (bytes != Stream<V>::sparse_bytes(count))
    throw bad_block(std::to_string(bytes) + " bytes for " + std::to_string(count) + " pairs");
  if (count > 0) std::memcpy(static_cast<void*>(out), block + sizeof header, bytes - sizeof header);
  return count;
}

template <class V>
void read_packed(const std::byte* block, size_t bytes, Stream<V>& s) {
  if (bytes < Stream<V>::kHeaderBytes) throw bad_block(std::to_string(bytes) + " bytes, shorter than a header");
  uint32_t header[2];
  std::memcpy(header, block, sizeof header);
  const uint32_t count = header[0], form = header[1];
  if (form != 1) {
    s.reserve_pairs(count);
    s.set_sparse(count);
    read_packed_pairs(block, bytes, s.pairs().data());
    return;
  }
  if (bytes != Stream<V>::dense_bytes(count))
    throw bad_block(std::to_string(bytes) + " bytes for " + std::to_string(count) + " dense values");
  s.reserve(count);
  std::memcpy(s.data(), block, bytes);
}

template <class V>
std::span<const std::byte> PackedStream<V>::wire(const Stream<V>& s) {
  const auto* own = static_cast<const std::byte*>(s.data());
  if (s.is_dense() || s.count() < 2) return {own, s.bytes()};
  // One pass: write the runs into room for the worst case (every pair a run of its own),
  // and send the pairs instead where the runs came out no smaller.
  const auto pairs = s.pairs();
  const size_t most = Stream<V>::kHeaderBytes + pairs.size() * (2 * sizeof(uint32_t) + sizeof(V));
  if (buf_.size() < most) buf_.resize(most);
  const size_t bytes = Stream<V>::kHeaderBytes + write_runs(pairs, buf_.data() + Stream<V>::kHeaderBytes);
  if (bytes >= s.bytes()) return {own, s.bytes()};
  const uint32_t header[2] = {s.count(), kRuns};
  std::memcpy(buf_.data(), header, sizeof header);
  return {buf_.data(), bytes};
}

template <class V>
void PackedStream<V>::unpack(Stream<V>& s, size_t received) {
  if (received < Stream<V>::kHeaderBytes)
    throw bad_block(std::to_string(received) + " bytes, shorter than a header");
  uint32_t header[2];
  std::memcpy(header, s.data(), sizeof header);
  if (header[1] != kRuns) {
    const size_t expected = header[1] == 1 ? Stream<V>::dense_bytes(header[0])
                            : header[1] == 0 ? Stream<V>::sparse_bytes(header[0])
                                             : 0;
    if (received != expected)
      throw bad_block(std::to_string(received) + " bytes of form " + std::to_string(header[1]) + " and count " +
                      std::to_string(header[0]));
    return;
  }
  if (buf_.size() < received) buf_.resize(received);
  std::memcpy(buf_.data(), s.data(), received);
  read_packed(buf_.data(), received, s);
}

template size_t runs_bytes<float>(std::span<const Pair<float>>);
template size_t runs_bytes<double>(std::span<const Pair<double>>);
template size_t write_runs<float>(std::span<const Pair<float>>, std::byte*);
template size_t write_runs<double>(std::span<const Pair<double>>, std::byte*);
template size_t read_runs<float>(const std::byte*, size_t, Pair<float>*);
template size_t read_runs<double>(const std::byte*, size_t, Pair<double>*);
template size_t packed_bytes<float>(std::span<const Pair<float>>);
template size_t packed_bytes<double>(std::span<const Pair<double>>);
template size_t write_packed<float>(std::span<const Pair<float>>, std::byte*);
template size_t write_packed<double>(std::span<const Pair<double>>, std::byte*);
template size_t read_packed_pairs<float>(const std::byte*, size_t, Pair<float>*);
template size_t read_packed_pairs<double>(const std::byte*, size_t, Pair<double>*);
template void read_packed<float>(const std::byte*, size_t, Stream<float>&);
template void read_packed<double>(const std::byte*, size_t, Stream<double>&);
template class PackedStream<float>;
template class PackedStream<double>;

}  // namespace mpisgd
