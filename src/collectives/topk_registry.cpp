#include "collectives/topk_allreduce.h"
#include "comm/find_by_name.h"

namespace mpisgd {

// One declaration and one entry per algorithm; each lives in a file of its own.
template <class V> std::unique_ptr<TopkAllreduce<V>> make_topk_allgather(CountedComm&, uint32_t, const TopkCollectiveConfig&);
template <class V> std::unique_ptr<TopkAllreduce<V>> make_topk_dsa(CountedComm&, uint32_t, const TopkCollectiveConfig&);
template <class V> std::unique_ptr<TopkAllreduce<V>> make_gtopk(CountedComm&, uint32_t, const TopkCollectiveConfig&); double gtopk_volume(const TopkVolumeInputs&);
template <class V> std::unique_ptr<TopkAllreduce<V>> make_oktopk(CountedComm&, uint32_t, const TopkCollectiveConfig&); double oktopk_volume_low(const TopkVolumeInputs&); double oktopk_volume_high(const TopkVolumeInputs&);

double topk_allgather_volume(const TopkVolumeInputs&);
double topk_dsa_volume_low(const TopkVolumeInputs&);
double topk_dsa_volume_high(const TopkVolumeInputs&);

template <class V>
const std::vector<TopkCollectiveInfo<V>>& topk_allreduce_registry() {
  static const std::vector<TopkCollectiveInfo<V>> registry = {
      {"topk-ag", "TopkA: allgather of every rank's k pairs, local sum", make_topk_allgather<V>, topk_allgather_volume,
       topk_allgather_volume},
      {"topk-dsa", "TopkDSA: SparCML's split + allgather on the k pairs, dense on fill-in", make_topk_dsa<V>,
       topk_dsa_volume_low, topk_dsa_volume_high},
      {"gtopk", "gTop-k: a tree of top-k merges, then a broadcast of the global top k", make_gtopk<V>, gtopk_volume, gtopk_volume},
      {"oktopk", "Ok-Topk: split-reduce over balanced regions, global top-k by reused threshold, balanced allgather", make_oktopk<V>, oktopk_volume_low, oktopk_volume_high},
  };
  return registry;
}

template <class V>
std::unique_ptr<TopkAllreduce<V>> make_topk_allreduce(const std::string& name, CountedComm& comm, uint32_t dim,
                                                      const TopkCollectiveConfig& config) {
  return find_by_name(topk_allreduce_registry<V>(), name, "top-k allreduce algorithm").make(comm, dim, config);
}

template const std::vector<TopkCollectiveInfo<float>>& topk_allreduce_registry<float>();
template const std::vector<TopkCollectiveInfo<double>>& topk_allreduce_registry<double>();
template std::unique_ptr<TopkAllreduce<float>> make_topk_allreduce(const std::string&, CountedComm&, uint32_t,
                                                                   const TopkCollectiveConfig&);
template std::unique_ptr<TopkAllreduce<double>> make_topk_allreduce(const std::string&, CountedComm&, uint32_t,
                                                                    const TopkCollectiveConfig&);

}  // namespace mpisgd
