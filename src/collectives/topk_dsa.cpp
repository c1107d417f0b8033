// TopkDSA (Ok-Topk paper, Li & Hoefler PPoPP'22, section 2.2 and Table 1; SparCML's dynamic
// sparse allreduce, Renggli et al. SC'19): the k selected pairs go through SSAR_Split_
// AllGather (ssar_split_ag.cpp): a sparse split to the P owners of [0, N), then an
// allgather whose blocks go dense once fill-in makes the pairs outweigh the dense form.
// Nothing is dropped. Volume per rank (Table 1): from 4k(P-1)/P elements, when all ranks
// select the same indices, to (2k + N)(P-1)/P, when the gathered sums are dense.
#include "collectives/collective_util.h"
#include "collectives/sparse_allreduce.h"
#include "collectives/topk_allreduce.h"

namespace mpisgd {
namespace {

// The lossless exchange packs as the top-k collectives do (TopkCollectiveConfig), whatever
// the network: it measures nothing.
CollectiveConfig lossless_config(const TopkCollectiveConfig& topk) {
  CollectiveConfig config;
  config.columns = topk.columns;
  config.pack_runs = topk.pack_runs;
  return config;
}

template <class V>
class TopkDsa final : public TopkAllreduce<V> {
 public:
  TopkDsa(CountedComm& comm, uint32_t dim, const TopkCollectiveConfig& config)
      : lossless_(make_sparse_allreduce<V>("ssar-split-ag", comm, dim, lossless_config(config))) {}

  const Stream<V>& allreduce(const Stream<V>& selected, uint64_t /*k*/, Stream<V>& dropped) override {
    dropped.set_empty();
    return lossless_->allreduce(selected);
  }

 private:
  std::unique_ptr<SparseAllreduce<V>> lossless_;
};

}  // namespace

template <class V>
std::unique_ptr<TopkAllreduce<V>> make_topk_dsa(CountedComm& comm, uint32_t dim, const TopkCollectiveConfig& c) {
  check_message_size<V>(dim, "topk-dsa");
  return std::make_unique<TopkDsa<V>>(comm, dim, c);
}

// Table 1 in bytes: the split sends (P-1)/P of a rank's k pairs; the allgather as many
// again when the sums stay k pairs (identical selections), or (P-1)/P of N dense values.
double topk_dsa_volume_low(const TopkVolumeInputs& in) {
  return 2.0 * static_cast<double>(in.k) * (in.ranks - 1) / in.ranks * in.pair_bytes;
}
double topk_dsa_volume_high(const TopkVolumeInputs& in) {
  const double share = static_cast<double>(in.ranks - 1) / in.ranks;
  return share * (static_cast<double>(in.k) * in.pair_bytes + static_cast<double>(in.dim) * in.value_bytes);
}

template std::unique_ptr<TopkAllreduce<float>> make_topk_dsa<float>(CountedComm&, uint32_t, const TopkCollectiveConfig&);
template std::unique_ptr<TopkAllreduce<double>> make_topk_dsa<double>(CountedComm&, uint32_t, const TopkCollectiveConfig&);

}  // namespace mpisgd
