#include "collectives/sparse_allreduce.h"
#include "comm/find_by_name.h"

namespace mpisgd {

// One declaration and one entry per algorithm; each lives in a file of its own.
template <class V> std::unique_ptr<SparseAllreduce<V>> make_dense_allreduce(CountedComm&, uint32_t, const CollectiveConfig&);
template <class V> std::unique_ptr<SparseAllreduce<V>> make_dense_rec_halving(CountedComm&, uint32_t, const CollectiveConfig&);
template <class V> std::unique_ptr<SparseAllreduce<V>> make_ssar_rec_dbl(CountedComm&, uint32_t, const CollectiveConfig&);
template <class V> std::unique_ptr<SparseAllreduce<V>> make_ssar_split_ag(CountedComm&, uint32_t, const CollectiveConfig&);
template <class V> std::unique_ptr<SparseAllreduce<V>> make_ssar_shm(CountedComm&, uint32_t, const CollectiveConfig&);
template <class V> std::unique_ptr<SparseAllreduce<V>> make_dsar_split_ag(CountedComm&, uint32_t, const CollectiveConfig&);
template <class V> std::unique_ptr<SparseAllreduce<V>> make_dsar_early(CountedComm&, uint32_t, const CollectiveConfig&);
template <class V> std::unique_ptr<SparseAllreduce<V>> make_sparse_auto(CountedComm&, uint32_t, const CollectiveConfig&);

double dense_allreduce_cost(const CostModel&);
double dense_rec_halving_cost(const CostModel&);
double ssar_rec_dbl_cost(const CostModel&);
double ssar_split_ag_cost(const CostModel&);
double ssar_shm_cost(const CostModel&);
template <class V> uint64_t ssar_shm_window(uint32_t, int);
double dsar_split_ag_cost(const CostModel&);
double dsar_early_cost(const CostModel&);

template <class V>
const std::vector<CollectiveInfo<V>>& sparse_allreduce_registry() {
  static const std::vector<CollectiveInfo<V>> registry = {
      {"dense", "MPI_Allreduce of the dense vector (the baseline)", make_dense_allreduce<V>, dense_allreduce_cost,
       false},
      {"dense-rec-halving", "dense recursive halving and doubling, summed in the sparse algorithms' order",
       make_dense_rec_halving<V>, dense_rec_halving_cost, true},
      {"ssar-rec-dbl", "recursive doubling with sparse sums (latency-bound, very sparse)", make_ssar_rec_dbl<V>,
       ssar_rec_dbl_cost, true},
      {"ssar-split-ag", "sparse split to owners, sparse recursive-doubling allgather", make_ssar_split_ag<V>,
       ssar_split_ag_cost, true},
      {"ssar-shm", "ssar-split-ag's sums through one node's shared memory: loads instead of messages",
       make_ssar_shm<V>, ssar_shm_cost, true, ssar_shm_window<V>},
      {"dsar-split-ag", "sparse split to owners, dense allgather (dense results)", make_dsar_split_ag<V>,
       dsar_split_ag_cost, true},
      {"dsar-early", "sparse split inside groups of --group-size, dense reduce-scatter, dense allgather",
       make_dsar_early<V>, dsar_early_cost, false},
      {"auto", "per call, the fastest of the algorithms summing in one order, by an alpha-beta model measured "
       "at start-up", make_sparse_auto<V>, nullptr, true},
  };
  return registry;
}

template <class V>
std::unique_ptr<SparseAllreduce<V>> make_sparse_allreduce(const std::string& name, CountedComm& comm, uint32_t dim,
                                                          const CollectiveConfig& config) {
  return find_by_name(sparse_allreduce_registry<V>(), name, "allreduce algorithm")
      .make(comm, dim, tuned(config, comm, sizeof(V)));
}

template const std::vector<CollectiveInfo<float>>& sparse_allreduce_registry<float>();
template const std::vector<CollectiveInfo<double>>& sparse_allreduce_registry<double>();
template std::unique_ptr<SparseAllreduce<float>> make_sparse_allreduce(const std::string&, CountedComm&, uint32_t,
                                                                       const CollectiveConfig&);
template std::unique_ptr<SparseAllreduce<double>> make_sparse_allreduce(const std::string&, CountedComm&, uint32_t,
                                                                        const CollectiveConfig&);

}  // namespace mpisgd
