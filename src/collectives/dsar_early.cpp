// Early-switching DSAR (thesis section 3.3.4, Figures 3.12-3.13; section 5.2.3 uses groups
// of 8): the sparse Split phase runs only inside groups of G consecutive ranks, so each
// rank's range is N/G and goes dense early, after G-1 messages instead of P-1. Ranks
// holding the same range in different groups then finish a dense reduce-scatter over the
// P/G groups (MPI_Reduce_scatter), and a dense allgather over all ranks builds the result.
// Cost, with Q = P/G:
//   ((G-1) + log2 Q + log2 P) alpha + ((G-1)/G k + (Q-1)/Q N/G + (P-1)/P N) beta.
// G must divide P for the groups to line up; otherwise the largest divisor of P below G
// is used (for a prime P that is 1: a dense reduce-scatter from the start).
#include <algorithm>

#include "collectives/collective_util.h"
#include "collectives/cost_model.h"
#include "collectives/dense_allgather.h"
#include "collectives/sparse_allreduce.h"
#include "collectives/split_reduce.h"
#include "sparse/stream_sum.h"

namespace mpisgd {

int early_dsar_group(int ranks, int requested) {
  for (int g = std::clamp(requested, 1, ranks); g > 1; --g) {
    if (ranks % g == 0) return g;
  }
  return 1;
}

namespace {

// Ranks (q, j) = (rank / G, rank % G): member j of group q.
struct Layout {
  uint32_t dim;
  int g, q_count;

  Range group_range(int j) const { return owned_range(dim, g, j); }
  // The final slice of rank (q, j): part q of group range j.
  Range slice(int rank) const {
    const Range r = group_range(rank % g);
    const Range sub = owned_range(r.length(), q_count, rank / g);
    return {r.begin + sub.begin, r.begin + sub.end};
  }
  static Layout of(uint32_t dim, int ranks, int requested_group) {
    const int g = early_dsar_group(ranks, requested_group);
    return {dim, g, ranks / g};
  }
  std::vector<Range> slices() const {
    std::vector<Range> all;
    for (int rank = 0; rank < g * q_count; ++rank) all.push_back(slice(rank));
    return all;
  }
};

MPI_Comm split_comm(MPI_Comm comm, int color, int key) {
  MPI_Comm out;
  MPI_Comm_split(comm, color, key, &out);
  return out;
}

template <class V>
class DsarEarly final : public SparseAllreduce<V> {
 public:
  DsarEarly(CountedComm& comm, uint32_t dim, const CollectiveConfig& config)
      : comm_(comm), layout_(Layout::of(dim, comm.size(), config.group_size)),
        group_(split_comm(comm.raw(), comm.rank() / layout_.g, comm.rank() % layout_.g)),
        cross_(split_comm(comm.raw(), comm.rank() % layout_.g, comm.rank() / layout_.g)),
        split_(group_, comm, dim, config.dense_switch, config.packs()), gather_(comm, layout_.slices()), result_(dim) {
    const int j = comm.rank() % layout_.g;
    for (int q = 0; q < layout_.q_count; ++q) {
      scatter_counts_.push_back(static_cast<int>(layout_.slice(q * layout_.g + j).length()));
    }
    group_dense_.resize(layout_.group_range(j).length());
  }

  ~DsarEarly() override {
    MPI_Comm_free(&group_);
    MPI_Comm_free(&cross_);
  }

  const Stream<V>& allreduce(const Stream<V>& input) override {
    CountedComm::Timed timed(comm_);
    const int rank = comm_.rank();
    const Range group_range = layout_.group_range(rank % layout_.g);
    write_dense(split_.reduce(input), group_range, group_dense_.data());

    result_.set_dense(layout_.dim);
    V* mine = result_.values().data() + layout_.slice(rank).begin;
    if (layout_.q_count > 1) {
      comm_.reduce_scatter_sum(group_dense_.data(), mine, scatter_counts_.data(), cross_);
    } else {
      std::copy(group_dense_.begin(), group_dense_.end(), mine);
    }
    gather_.run(result_.values().data());
    return result_;
  }

 private:
  CountedComm& comm_;
  Layout layout_;
  MPI_Comm group_, cross_;
  SplitReduce<V> split_;
  DenseAllgather<V> gather_;
  std::vector<int> scatter_counts_;
  std::vector<V> group_dense_;
  Stream<V> result_;
};

}  // namespace

double dsar_early_cost(const CostModel& m) {
  const int g = early_dsar_group(m.in().ranks, m.in().group_size);
  return m.split(g) + m.dense_reduce_scatter(m.n() / g, m.in().ranks / g) + m.dense_allgather();
}

template <class V>
std::unique_ptr<SparseAllreduce<V>> make_dsar_early(CountedComm& comm, uint32_t dim, const CollectiveConfig& c) {
  check_message_size<V>(dim, "dsar-early");  // before any buffer is made
  return std::make_unique<DsarEarly<V>>(comm, dim, c);
}
template std::unique_ptr<SparseAllreduce<float>> make_dsar_early(CountedComm&, uint32_t, const CollectiveConfig&);
template std::unique_ptr<SparseAllreduce<double>> make_dsar_early(CountedComm&, uint32_t, const CollectiveConfig&);

}  // namespace mpisgd
