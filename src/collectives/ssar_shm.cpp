// SSAR_Split_AllGather (thesis section 3.3.3) through one node's shared memory: the same
// owned ranges and the same sums in canonical_sum_order(), the transfers replaced by
// loads from a shared window (comm/shared_slots.h). Each rank writes its input to its
// slot; after a barrier the owner of range j reads the part in j of every rank's input
// straight from their slots and sums them, then writes its sum, compacted as the
// allgather's blocks are, to its slot; after a second barrier every rank concatenates
// the P sums. What shared-memory messages cost besides the bytes (a handshake per
// message, a copy into a receive buffer, P - 1 + log2 P latencies) becomes two barriers.
// Cost per rank, with k the largest input and K the sum, both in items:
//   2 barrier + (P-1)/P (k + K) beta + the owned range's tree of sums,
// the sums run by every rank at once between the barriers, so that ranks sharing a core
// take them in turn. Runs only where every rank is on one node and /dev/shm has room for
// the window (comm/shared_slots.h).
#include <cstring>
#include <stdexcept>
#include <string>

#include "collectives/collective_util.h"
#include "collectives/cost_model.h"
#include "collectives/sparse_allreduce.h"
#include "comm/shared_slots.h"
#include "sparse/stream_sum.h"

namespace mpisgd {
namespace {

template <class V>
size_t aligned_capacity(uint64_t length) {
  return (Stream<V>::capacity_bytes(length) + 7) / 8 * 8;
}

// A rank's slot: room for an input over [0, N), then for the sum of the longest owned range.
template <class V>
size_t slot_bytes(uint32_t dim, int ranks) {
  return aligned_capacity<V>(dim) + aligned_capacity<V>((uint64_t{dim} + ranks - 1) / ranks);
}

// Bytes of the part of `in` that lies in `part`, as another rank reads them.
template <class V>
uint64_t part_bytes(StreamView<V> in, Range part) {
  if (in.is_dense()) return Stream<V>::dense_bytes(part.length());
  return Stream<V>::sparse_bytes(in.pairs_in(part).size());
}

template <class V>
class SsarShm final : public SparseAllreduce<V> {
 public:
  SsarShm(CountedComm& comm, uint32_t dim, const CollectiveConfig& config)
      : comm_(comm), whole_{0, dim}, sw_(config.dense_switch), tree_(canonical_sum_order(comm.size())),
        input_bytes_(aligned_capacity<V>(dim)),
        slots_(comm.raw(), slot_bytes<V>(dim, comm.size())),
        part_(static_cast<size_t>(comm.size())), acc_(dim), gather_scratch_(dim) {
    for (auto& p : part_) p.reserve(owned().length());
    sum_scratch_.reserve(owned().length());
    compacted_.reserve(owned().length());
  }

  const Stream<V>& allreduce(const Stream<V>& input) override {
    CountedComm::Timed timed(comm_);
    const int p = comm_.size(), me = comm_.rank();
    std::memcpy(slots_.mine(), input.data(), input.bytes());
    slots_.publish();

    uint64_t read = 0, given = 0;  // bytes of this rank's slot others read, and of theirs it read
    for (int s = 0; s < p; ++s) {
      const StreamView<V> in(slots_.of(s));
      extract(in, whole_, owned(), sw_, part_[static_cast<size_t>(s)]);
      if (s != me) {
        read += part_bytes(in, owned());
        given += part_bytes(input.view(), range(s));
      }
    }
    for (const auto& [into, from] : tree_) {
      add_overlapping(part_[static_cast<size_t>(into)], part_[static_cast<size_t>(from)], sum_scratch_, owned(), sw_);
    }
    const Stream<V>* sum = &part_[0];
    if (sum->is_dense()) {
      compact(*sum, owned(), compacted_);
      sum = &compacted_;
    }
    std::memcpy(slots_.mine() + input_bytes_, sum->data(), sum->bytes());
    given += static_cast<uint64_t>(p - 1) * sum->bytes();
    slots_.publish();

    for (int s = 0; s < p; ++s) {
      const StreamView<V> sum_s(slots_.of(s) + input_bytes_);
      if (s != me) read += sum_s.bytes();
      if (s == 0) {
        acc_.copy_from(sum_s);
      } else {
        concat_disjoint(acc_, sum_s, Range{0, range(s).begin}, range(s), gather_scratch_);
      }
    }
    comm_.count_shared(given, read);
    return acc_;
  }

 private:
  Range range(int part) const { return owned_range(whole_.end, comm_.size(), part); }
  Range owned() const { return range(comm_.rank()); }

  CountedComm& comm_;
  Range whole_;
  DenseSwitch sw_;
  std::vector<std::pair<int, int>> tree_;
  size_t input_bytes_;  // a slot: an input stream over [0, N), then an owned range's sum
  SharedSlots slots_;
  std::vector<Stream<V>> part_;  // s: rank s's input in the owned range, then the tree's partial sums
  Stream<V> sum_scratch_, compacted_, acc_, gather_scratch_;
};

}  // namespace

double ssar_shm_cost(const CostModel& m) {
  const double total = m.sum_of(m.p()), length = m.n() / m.p();
  const double others = m.p() - 1;
  const double loads = others * (m.transfer(m.in().k / m.p(), length) + m.gather_transfer(total / m.p(), length));
  return 2 * m.barrier() + loads + m.in().core_sharing * (m.tree_sums(m.in().ranks) + m.compact(total / m.p(), length));
}

template <class V>
uint64_t ssar_shm_window(uint32_t dim, int ranks) {
  return static_cast<uint64_t>(ranks) * slot_bytes<V>(dim, ranks);
}
template uint64_t ssar_shm_window<float>(uint32_t, int);
template uint64_t ssar_shm_window<double>(uint32_t, int);

template <class V>
std::unique_ptr<SparseAllreduce<V>> make_ssar_shm(CountedComm& comm, uint32_t dim, const CollectiveConfig& c) {
  check_message_size<V>(dim, "ssar-shm");  // before any buffer is made
  const uint64_t window = ssar_shm_window<V>(dim, comm.size());
  const uint64_t room = c.measured ? c.measured->shared_room : shared_window_room(comm.raw());
  if (room == 0) {
    throw std::invalid_argument("ssar-shm: the ranks are not all on one node (or the run is simulated), so they "
                                "share no memory; use ssar-split-ag");
  }
  if (window > room) {
    throw std::invalid_argument("ssar-shm: its shared window takes " + std::to_string(window >> 20) +
                                " MiB for N = " + std::to_string(dim) + ", more than half of what /dev/shm has free (" +
                                std::to_string(room >> 19) + " MiB); use ssar-split-ag");
  }
  return std::make_unique<SsarShm<V>>(comm, dim, c);
}
template std::unique_ptr<SparseAllreduce<float>> make_ssar_shm(CountedComm&, uint32_t, const CollectiveConfig&);
template std::unique_ptr<SparseAllreduce<double>> make_ssar_shm(CountedComm&, uint32_t, const CollectiveConfig&);

}  // namespace mpisgd
