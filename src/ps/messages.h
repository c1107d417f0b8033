#pragma once
// The parameter-server protocol's messages: a fixed header, then arrays, packed into one
// byte buffer so that each exchange is one MPI message (one alpha). Indices are global
// feature numbers. Per worker step, for each of the S servers:
//   kTagPull    worker -> server   PullHeader, then the k_s indices the batch touches
//   kTagValues  server -> worker   ValuesHeader, then their k_s values; where the server
//                                  keeps copies (client_copies.h), then the n changed
//                                  indices and their n values
//   kTagPush    worker -> server   PushHeader, then the update's m_s indices, then values
// and at the end of an epoch kTagDone, empty, once per worker and server. Bytes per worker
// step: 8 k + 8 m plus 3 S headers; a server takes the sum over the workers of its shard's
// part. Every message a worker sends is received: a server stops only once every worker
// said it is done, and a worker says so after its last push.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <vector>

namespace mpisgd {

// Above the collectives' tags (collective_util.h), so the two can never be confused.
enum PsTag : int { kTagPull = 201, kTagValues, kTagPush, kTagDone };

struct PullHeader {
  uint64_t step;  // the worker's step in this epoch, from 0
};
struct ValuesHeader {
  uint64_t version;     // the shard's version the values are from
  double held_s;        // how long the server held the pull back (staleness bound)
  uint64_t epoch_over;  // ps-async: 1 once the epoch's pushes are in (ShardServer::share_epoch)
};
struct PushHeader {
  uint64_t step;
  uint64_t version;  // the version the worker pulled for this step
  double eta;        // the step's learning rate
  uint64_t steps;    // worker steps the update sums: 1, or up to M under --overlap
};

// A message as raw bytes. Arrays are copied in and out with memcpy: the buffer holds
// bytes, and reading floats through a cast pointer into it would break aliasing rules.
class Message {
 public:
  template <class H>
  void start(const H& header) {
    bytes_.resize(sizeof(H));
    std::memcpy(bytes_.data(), &header, sizeof(H));
  }
  template <class T>
  void append(std::span<const T> items) {
    const size_t at = bytes_.size();
    bytes_.resize(at + items.size_bytes());
    if (!items.empty()) std::memcpy(bytes_.data() + at, items.data(), items.size_bytes());
  }
  // Appends one field of each item as an array, e.g. the indices of an update's pairs.
  template <class T, class F>
  void append_field(std::span<const T> items, F T::*field) {
    const size_t at = bytes_.size();
    bytes_.resize(at + items.size() * sizeof(F));
    auto* to = bytes_.data() + at;
    for (const T& item : items) {
      const F value = item.*field;
      std::memcpy(to, &value, sizeof(F));
      to += sizeof(F);
    }
  }

  template <class H>
  H header() const {
    if (bytes_.size() < sizeof(H)) throw std::logic_error("parameter-server message shorter than its header");
    H h;
    std::memcpy(&h, bytes_.data(), sizeof(H));
    return h;
  }
  // Items of `item_bytes` bytes each (all arrays together) after a header of H.
  template <class H>
  size_t items(size_t item_bytes) const {
    return (bytes_.size() - sizeof(H)) / item_bytes;
  }
  // Copies n items of T, starting `skip` items of T past the header of H, to out[0, n).
  template <class H, class T>
  void read(size_t skip, size_t n, T* out) const {
    if (n) std::memcpy(out, bytes_.data() + sizeof(H) + skip * sizeof(T), n * sizeof(T));
  }

  std::byte* data() { return bytes_.data(); }
  const std::byte* data() const { return bytes_.data(); }
  size_t size() const { return bytes_.size(); }
  void resize(size_t n) { bytes_.resize(n); }

 private:
  std::vector<std::byte> bytes_;
};

}  // namespace mpisgd
