// TopkA (Ok-Topk paper, Li & Hoefler PPoPP'22, section 2.2 and Table 1; the thesis' TopK
// SGD over an allgather, section 2.4): every rank's k selected pairs are allgathered and
// each rank sums all P lists locally. Nothing is dropped: the result is the exact sum of
// what was selected. Volume per rank: 2k(P-1) elements (k pairs from each other rank),
// the bound that grows with P and that the other top-k algorithms improve on.
// Cost: log2(P) alpha + k(P-1) pair-bytes beta, plus the local sum of P lists of k.
//
// MPI_Allgatherv picks the exchange; the bytes counted are those of a bandwidth-optimal
// allgather (every rank receives, and forwards, all other ranks' pairs). The P lists are
// summed pairwise in the canonical tree order (collective_util.h), so every rank adds the
// same values in the same order and all results are equal bit for bit.
#include <algorithm>
#include <numeric>
#include <stdexcept>

#include "collectives/collective_util.h"
#include "collectives/topk_allreduce.h"
#include "sparse/stream_sum.h"

namespace mpisgd {
namespace {

template <class V>
class TopkAllgather final : public TopkAllreduce<V> {
 public:
  TopkAllgather(CountedComm& comm, uint32_t dim, bool runs)
      : comm_(comm), dim_(dim), runs_(runs), counts_(comm.size()), displs_(comm.size()), parts_(comm.size()),
        scratch_(dim) {}

  const Stream<V>& allreduce(const Stream<V>& selected, uint64_t /*k*/, Stream<V>& dropped) override {
    CountedComm::Timed timed(comm_);
    dropped.set_empty();
    pairs_of(selected);
    const int p = comm_.size();
    if (runs_) {
      packed_.resize(packed_bytes<V>(send_));
      write_packed<V>(send_, packed_.data());
    }
    int mine = static_cast<int>(runs_ ? packed_.size() : send_.size() * sizeof(Pair<V>));
    comm_.allgather(&mine, 1, counts_.data());
    std::exclusive_scan(counts_.begin(), counts_.end(), displs_.begin(), 0);
    const size_t total = static_cast<size_t>(displs_[p - 1]) + static_cast<size_t>(counts_[p - 1]);
    if (total > static_cast<size_t>(INT32_MAX)) throw std::runtime_error("topk-ag: the gathered pairs exceed 2 GiB");
    if (runs_) {
      gathered_.resize(total);
      comm_.allgatherv(packed_.data(), gathered_.data(), counts_.data(), displs_.data(), MPI_BYTE);
    } else {
      recv_.resize(total / sizeof(Pair<V>));
      comm_.allgatherv(send_.data(), recv_.data(), counts_.data(), displs_.data(), MPI_BYTE);
    }

    for (int r = 0; r < p; ++r) {
      parts_[r].reserve(dim_);
      if (runs_) {
        read_packed(gathered_.data() + displs_[r], static_cast<size_t>(counts_[r]), parts_[r]);
        continue;
      }
      const auto count = static_cast<uint32_t>(counts_[r] / sizeof(Pair<V>));
      parts_[r].reserve_pairs(count);
      parts_[r].set_sparse(count);
      std::copy_n(recv_.data() + displs_[r] / sizeof(Pair<V>), count, parts_[r].pairs().data());
    }
    for (auto [into, from] : canonical_sum_order(p))
      add_overlapping(parts_[into], parts_[from], scratch_, Range{0, dim_}, DenseSwitch{});
    return parts_[0];
  }

 private:
  // The selection arrives sparse; a dense one (every value kept) is sent as its pairs.
  void pairs_of(const Stream<V>& s) {
    send_.clear();
    if (!s.is_dense()) {
      send_.assign(s.pairs().begin(), s.pairs().end());
      return;
    }
    for (uint32_t i = 0; i < s.count(); ++i)
      if (s.values()[i] != V{0}) send_.push_back({i, s.values()[i]});
  }

  CountedComm& comm_;
  uint32_t dim_;
  bool runs_;  // pairs cross packed into runs (sparse/packed_stream.h), for K >= 2 columns
  std::vector<int> counts_, displs_;  // bytes, per rank
  std::vector<Pair<V>> send_, recv_;
  std::vector<std::byte> packed_, gathered_;  // with runs_: send_ packed, and every rank's
  std::vector<Stream<V>> parts_;  // rank r's pairs, then the partial sums of the tree
  Stream<V> scratch_;
};

}  // namespace

template <class V>
std::unique_ptr<TopkAllreduce<V>> make_topk_allgather(CountedComm& comm, uint32_t dim, const TopkCollectiveConfig& c) {
  check_message_size<V>(dim, "topk-ag");
  return std::make_unique<TopkAllgather<V>>(comm, dim, c.packs());
}

// Table 1: 2k(P-1) elements, k(P-1) pairs.
double topk_allgather_volume(const TopkVolumeInputs& in) {
  return static_cast<double>(in.k) * (in.ranks - 1) * in.pair_bytes;
}

template std::unique_ptr<TopkAllreduce<float>> make_topk_allgather<float>(CountedComm&, uint32_t,
                                                                         const TopkCollectiveConfig&);
template std::unique_ptr<TopkAllreduce<double>> make_topk_allgather<double>(CountedComm&, uint32_t,
                                                                           const TopkCollectiveConfig&);

}  // namespace mpisgd
