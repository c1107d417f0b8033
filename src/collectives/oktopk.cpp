// Ok-Topk's O(k) sparse allreduce (Li & Hoefler, "Near-Optimal Sparse Allreduce for
// Distributed Deep Learning", PPoPP'22: Algorithm 1, sections 3.1.1-3.1.3 and 5.3), with
// Algorithm 2's residual. It computes Topk(sum_i Topk(G_i)); the inner, local top-k is the
// caller's `selected`, the outer, global one is done here in four steps:
//
//  1. split and reduce (oktopk_regions.h): rank j sums region j of every rank's pairs; the
//     region bounds balance the local top-k indices and are recomputed every tau calls
//     (repartition_period).
//  2. global selection by threshold (section 3.1.3): every tau' calls (reuse_period) the
//     exact threshold, the k-th largest |sum| over all regions, from an allgather of the
//     regions' magnitudes (Algorithm 1 lines 9-12; each region sends only its k largest,
//     which hold the global k); reused in between. Each rank keeps its sums at or above it.
//  3. balance and allgather (section 3.1.2): if one rank keeps more than 4x the mean
//     (the trigger of section 5.3), the kept pairs are first moved point-to-point so that
//     rank j holds the j-th of P equal slices of their concatenation; then an allgather.
//     Regions ascend with the rank, so the concatenation is the result, indices ascending.
//  4. residual (Algorithm 1 line 14, Algorithm 2 line 6): `dropped` is this rank's selected
//     pairs whose index the result lacks. A kept index carries the whole sum of every
//     rank's pairs there, so sum(selected) = result + sum(dropped), exactly.
//
// Cost per call (Table 1, equations 1-3), in elements (an index or a value) per rank:
//   split 2k(P-1)/P + balancing [0, 2k(P-1)/P] + allgather 2k(P-1)/P,
//   (2P + 2 log P) alpha + [2k, 6k](P-1)/P beta;
// uniform indices keep the ranks' shares even, so no balancing: about 4k(P-1)/P. The
// threshold's allgather (up to k magnitudes per region) and the bounds' allreduce (P-1
// words) come every tau' and tau calls, amortized as in the paper.
//
// With K columns (a K-class model's update, feature-major) the candidates of the global
// selection are features, not single sums: regions start at multiples of K, a feature's
// key is the norm of its K sums, the threshold is the ceil(k / K)-th largest key, and a
// feature at or above it is kept whole (as a rank's own selection, sparse/feature_select.h),
// so the result is runs of K indices and crosses packed (sparse/packed_stream.h).
//
// One addition to the paper, after its reference code (which rescales a reused threshold
// whose count leaves [2k/3, 4k/3]): a reused threshold that keeps a number of non-zero
// sums outside [min(k, non-zero sums)/2, 2k] is re-evaluated exactly on the next call, as
// is one computed for another k.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <memory>
#include <numeric>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "collectives/collective_util.h"
#include "collectives/oktopk_regions.h"
#include "collectives/topk_allreduce.h"
#include "sparse/packed_stream.h"
#include "sparse/stream_sum.h"

namespace mpisgd {
namespace {

// The balancing's point-to-point messages; above collective_util.h's CollectiveTag.
constexpr int kTagBalance = 201;

// Magnitudes compare as the bits of |v|: non-negative IEEE values order as their bits do,
// so a threshold is an integer that every rank compares alike. Every magnitude, NaN
// included, lies below kAboveAll.
template <class V>
using Key = std::conditional_t<sizeof(V) == 4, uint32_t, uint64_t>;

template <class V>
constexpr Key<V> kAboveAll = Key<V>{1} << (8 * sizeof(V) - 1);

template <class V>
Key<V> magnitude(V v) {
  return std::bit_cast<Key<V>>(v) & (kAboveAll<V> - 1);
}

// The sums a region holds, in either form, as (index, value) by position.
template <class V>
struct Sums {
  const Stream<V>& s;
  Range range;
  size_t size() const { return s.is_dense() ? s.values().size() : s.pairs().size(); }
  uint32_t index(size_t j) const { return s.is_dense() ? range.begin + static_cast<uint32_t>(j) : s.pairs()[j].index; }
  V value(size_t j) const { return s.is_dense() ? s.values()[j] : s.pairs()[j].value; }
};

// Calls f(key, begin, end) on every candidate for the result among a region's sums: one
// sum (columns 1) or a feature's sums (K columns), at positions [begin, end), keyed by the
// magnitude of the sum or of the feature's norm. A candidate is each pair of a sparse
// stream, each value (or K values) of a dense one: a sum that cancelled to zero stays a
// candidate, kept when all non-zero ones are (threshold 0); left out, the ranks' pairs
// there would be dropped though k covers them all.
template <class V, class F>
void for_each_candidate(const Sums<V>& sums, uint32_t columns, F f) {
  const size_t n = sums.size();
  if (columns == 1) {
    for (size_t j = 0; j < n; ++j) f(magnitude(sums.value(j)), j, j + 1);
    return;
  }
  for (size_t j = 0; j < n;) {
    const size_t begin = j;
    const uint32_t feature = sums.index(j) / columns;
    double squares = 0;
    for (; j < n && sums.index(j) / columns == feature; ++j) {
      const double v = sums.value(j);
      squares += v * v;
    }
    f(magnitude(static_cast<V>(std::sqrt(squares))), begin, j);
  }
}

// Leaves the min(k, n) largest of `keys` in it, in no order. std::nth_element rather than
// sparse/topk_select.h's selectors, which take float values and return positions.
template <class K>
void keep_largest(std::vector<K>& keys, uint64_t k) {
  if (k >= keys.size()) return;
  std::nth_element(keys.begin(), keys.begin() + static_cast<ptrdiff_t>(k - 1), keys.end(), std::greater<>());
  keys.resize(k);
}

// out = `pairs` (indices ascending, distinct, below dim) as a stream over [0, dim): pairs
// while they take fewer bytes than the dense form, else dense.
template <class V>
void store(std::span<const Pair<V>> pairs, uint32_t dim, Stream<V>& out) {
  out.reserve(dim);
  if (pairs.size() > kByteBound.switch_count<V>(dim)) {
    out.set_zero_dense(dim);
    V* dense = out.values().data();
    for (const Pair<V>& p : pairs) dense[p.index] = p.value;
    return;
  }
  out.set_sparse(static_cast<uint32_t>(pairs.size()));
  std::copy(pairs.begin(), pairs.end(), out.pairs().begin());
}

template <class V>
class OkTopk final : public TopkAllreduce<V> {
 public:
  OkTopk(CountedComm& comm, uint32_t dim, const TopkCollectiveConfig& config)
      : comm_(comm), dim_(dim), config_(config), columns_(std::max(1u, config.columns)),
        regions_(comm, dim, columns_, config.packs()), counts_(comm.size()), displs_(comm.size()),
        byte_counts_(comm.size()), byte_displs_(comm.size()),
        shares_(kShares * static_cast<size_t>(comm.size())), result_(dim) {
    // Pairs travel as one contiguous type, so that counts stay pairs, not bytes, and fit an int.
    MPI_Type_contiguous(static_cast<int>(sizeof(Pair<V>)), MPI_BYTE, &pair_type_);
    MPI_Type_commit(&pair_type_);
  }
  ~OkTopk() override { MPI_Type_free(&pair_type_); }

  void save_state(StateWriter& out) const override {
    out.put(calls_);
    out.put(k_);
    out.put(drifted_);
    out.put(threshold_);
    out.put_vector(regions_.bounds());
  }
  void load_state(StateReader& in) override {
    calls_ = in.get<uint64_t>();
    k_ = in.get<uint64_t>();
    drifted_ = in.get<bool>();
    threshold_ = in.get<Key<V>>();
    regions_.set_bounds(in.get_vector<uint32_t>());
  }
  OkTopk(const OkTopk&) = delete;
  OkTopk& operator=(const OkTopk&) = delete;

  const Stream<V>& allreduce(const Stream<V>& selected, uint64_t k, Stream<V>& dropped) override {
    CountedComm::Timed timed(comm_);
    if (calls_ % config_.repartition_period == 0) regions_.repartition(selected);
    const bool fresh = calls_ % config_.reuse_period == 0 || k != k_ || drifted_;
    ++calls_;
    const Stream<V>& reduced = regions_.reduce(selected);
    if (fresh) {
      threshold_ = global_threshold(reduced, k);
      k_ = k;
    }
    const Shares all = share(keep(reduced));
    const uint64_t budget = candidates(k);
    drifted_ = !fresh && (all.kept_nonzero > 2 * budget || 2 * all.kept_nonzero < std::min(budget, all.nonzero));
    gather(all.kept);
    store<V>(gathered_, dim_, result_);
    residual(selected, dropped);
    return result_;
  }

 private:
  struct Shares {
    uint64_t kept = 0, kept_nonzero = 0, nonzero = 0;  // pairs, and sums that are not zero
  };
  static constexpr int kShares = 3;


  // The candidates a budget of k values allows: k sums, or ceil(k / K) features.
  uint64_t candidates(uint64_t k) const { return (k + columns_ - 1) / columns_; }

  // Algorithm 1 lines 10-11: the k-th largest key of all regions' non-zero candidates
  // (with K columns, the ceil(k / K)-th); 0, which keeps every candidate, the cancelled
  // ones too, when there are at most that many; kAboveAll, which keeps none, for k = 0.
  Key<V> global_threshold(const Stream<V>& reduced, uint64_t k) {
    if (k == 0) return kAboveAll<V>;
    k = candidates(k);
    keys_.clear();
    for_each_candidate(Sums<V>{reduced, regions_.owned()}, columns_, [&](Key<V> m, size_t, size_t) {
      if (m) keys_.push_back(m);
    });
    keep_largest(keys_, k);
    const int p = comm_.size(), mine = static_cast<int>(keys_.size());
    comm_.allgather(&mine, 1, counts_.data());
    std::exclusive_scan(counts_.begin(), counts_.end(), displs_.begin(), 0);
    const auto total = static_cast<size_t>(displs_[p - 1]) + static_cast<size_t>(counts_[p - 1]);
    all_keys_.resize(total);
    comm_.allgatherv(keys_.data(), all_keys_.data(), counts_.data(), displs_.data(), mpi_type<Key<V>>());
    if (total <= k) return 0;
    keep_largest(all_keys_, k);
    return *std::min_element(all_keys_.begin(), all_keys_.end());
  }

  // kept_ = this region's sums of the candidates at or above the threshold; nonzero_ =
  // how many candidates are non-zero. Returns how many kept ones are.
  uint32_t keep(const Stream<V>& reduced) {
    kept_.clear();
    nonzero_ = 0;
    uint32_t kept_nonzero = 0;
    const Sums<V> sums{reduced, regions_.owned()};
    for_each_candidate(sums, columns_, [&](Key<V> m, size_t begin, size_t end) {
      nonzero_ += m != 0;
      if (m < threshold_) return;
      for (size_t j = begin; j < end; ++j) kept_.push_back({sums.index(j), sums.value(j)});
      kept_nonzero += m != 0;
    });
    return kept_nonzero;
  }

  // Every rank's kept pairs (the layout of the allgather), kept non-zero sums and non-zero
  // sums (the drift of a reused threshold), in shares_; returns their totals.
  Shares share(uint32_t kept_nonzero) {
    const uint32_t mine[kShares] = {static_cast<uint32_t>(kept_.size()), kept_nonzero, nonzero_};
    comm_.allgather(mine, kShares, shares_.data());
    Shares all;
    for (int r = 0; r < comm_.size(); ++r) {
      all.kept += shares_[kShares * r];
      all.kept_nonzero += shares_[kShares * r + 1];
      all.nonzero += shares_[kShares * r + 2];
    }
    return all;
  }

  // gathered_ = every rank's kept_ in rank order (section 3.1.2).
  void gather(uint64_t total) {
    const int p = comm_.size(), me = comm_.rank();
    uint64_t most = 0;
    for (int r = 0; r < p; ++r) {
      counts_[r] = static_cast<int>(shares_[kShares * r]);
      most = std::max<uint64_t>(most, shares_[kShares * r]);
    }
    std::exclusive_scan(counts_.begin(), counts_.end(), displs_.begin(), 0);
    gathered_.resize(total);
    if (most * static_cast<uint64_t>(p) > 4 * total) {
      balance(total);
    } else {
      std::copy(kept_.begin(), kept_.end(), gathered_.begin() + displs_[me]);
    }
    if (config_.packs()) {
      gather_packed();
    } else {
      comm_.allgatherv(MPI_IN_PLACE, gathered_.data(), counts_.data(), displs_.data(), pair_type_);
    }
  }

  // The allgather of gather(), each rank's slice packed into runs (sparse/packed_stream.h):
  // with K columns the kept sums are runs of a feature's K slots.
  void gather_packed() {
    const int p = comm_.size(), me = comm_.rank();
    const std::span<const Pair<V>> slice(gathered_.data() + displs_[me], static_cast<size_t>(counts_[me]));
    packed_.resize(packed_bytes(slice));
    write_packed(slice, packed_.data());
    const int mine = static_cast<int>(packed_.size());
    comm_.allgather(&mine, 1, byte_counts_.data());
    std::exclusive_scan(byte_counts_.begin(), byte_counts_.end(), byte_displs_.begin(), 0);
    all_packed_.resize(static_cast<size_t>(byte_displs_[p - 1]) + static_cast<size_t>(byte_counts_[p - 1]));
    comm_.allgatherv(packed_.data(), all_packed_.data(), byte_counts_.data(), byte_displs_.data(), MPI_BYTE);
    for (int r = 0; r < p; ++r) {
      if (r == me) continue;
      const size_t n = read_packed_pairs<V>(all_packed_.data() + byte_displs_[r], static_cast<size_t>(byte_counts_[r]),
                                            gathered_.data() + displs_[r]);
      if (n != static_cast<size_t>(counts_[r]))
        throw std::runtime_error("oktopk: rank " + std::to_string(r) + " sent " + std::to_string(n) +
                                 " pairs where it counted " + std::to_string(counts_[r]));
    }
  }

  // Data balancing (Figure 3): rank j ends with slice j, [total j / P, total (j+1) / P), of
  // the concatenation, in place in gathered_; counts_ and displs_ then describe the slices.
  // Each rank sends the parts of its own pairs that fall into other slices and receives
  // the parts of others' pairs that fall into its slice, destinations rotated as in the split.
  void balance(uint64_t total) {
    const int p = comm_.size(), me = comm_.rank();
    const auto slice = [&](int j) { return total * static_cast<uint64_t>(j) / static_cast<uint64_t>(p); };
    const auto held = [&](int r) {
      return std::pair<uint64_t, uint64_t>(displs_[r], static_cast<uint64_t>(displs_[r]) + counts_[r]);
    };
    const auto [lo, hi] = held(me);
    requests_.clear();
    for (int d = 1; d < p; ++d) {
      const int from = (me - d + p) % p, to = (me + d) % p;
      const auto [from_lo, from_hi] = held(from);
      const uint64_t in_lo = std::max(from_lo, slice(me)), in_hi = std::min(from_hi, slice(me + 1));
      if (in_lo < in_hi) {
        requests_.push_back(
            comm_.irecv(gathered_.data() + in_lo, static_cast<int>(in_hi - in_lo), pair_type_, from, kTagBalance));
      }
      const uint64_t out_lo = std::max(lo, slice(to)), out_hi = std::min(hi, slice(to + 1));
      if (out_lo < out_hi) {
        requests_.push_back(
            comm_.isend(kept_.data() + (out_lo - lo), static_cast<int>(out_hi - out_lo), pair_type_, to, kTagBalance));
      }
    }
    const uint64_t own_lo = std::max(lo, slice(me)), own_hi = std::min(hi, slice(me + 1));
    if (own_lo < own_hi) std::copy_n(kept_.data() + (own_lo - lo), own_hi - own_lo, gathered_.data() + own_lo);
    MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
    for (int j = 0; j < p; ++j) {
      displs_[j] = static_cast<int>(slice(j));
      counts_[j] = static_cast<int>(slice(j + 1) - slice(j));
    }
  }

  // dropped = the entries of `selected` whose index is not in gathered_ (both ascending).
  void residual(const Stream<V>& selected, Stream<V>& dropped) {
    drop_.clear();
    size_t at = 0;
    for_each_entry(selected, Range{0, dim_}, [&](uint32_t index, V v) {
      while (at < gathered_.size() && gathered_[at].index < index) ++at;
      if (at == gathered_.size() || gathered_[at].index != index) drop_.push_back({index, v});
    });
    store<V>(drop_, dim_, dropped);
  }

  CountedComm& comm_;
  uint32_t dim_;
  TopkCollectiveConfig config_;
  uint32_t columns_;  // weights a feature: the candidates' size
  RegionReduce<V> regions_;
  MPI_Datatype pair_type_ = MPI_DATATYPE_NULL;
  uint64_t calls_ = 0;
  uint64_t k_ = 0;          // the k threshold_ was computed for
  bool drifted_ = false;    // the reused threshold's count left its band last call
  Key<V> threshold_ = 0;
  std::vector<int> counts_, displs_;  // per rank: of the allgather being set up
  std::vector<int> byte_counts_, byte_displs_;  // per rank: gather_packed's blocks
  std::vector<std::byte> packed_, all_packed_;
  std::vector<uint32_t> shares_;      // per rank: kept pairs, kept non-zero sums, non-zero sums
  uint32_t nonzero_ = 0;              // this region's non-zero sums
  std::vector<Key<V>> keys_, all_keys_;
  std::vector<Pair<V>> kept_, gathered_, drop_;
  std::vector<MPI_Request> requests_;
  Stream<V> result_;
};

}  // namespace

template <class V>
std::unique_ptr<TopkAllreduce<V>> make_oktopk(CountedComm& comm, uint32_t dim, const TopkCollectiveConfig& config) {
  check_message_size<V>(dim, "oktopk");
  if (config.repartition_period == 0 || config.reuse_period == 0)
    throw std::invalid_argument("oktopk: the repartition and threshold reuse periods must be at least 1");
  return std::make_unique<OkTopk<V>>(comm, dim, config);
}

// Table 1 in bytes: [2k, 6k](P-1)/P elements are [1, 3] k(P-1)/P pairs. The low end is the
// lower bound of Theorem 3.1 (every rank's pairs in its own region, the kept pairs spread
// evenly: only the allgather moves data); the high end adds a full split and a full
// balancing. Uniform indices sit near 2 k(P-1)/P pairs (split and allgather).
double oktopk_volume_low(const TopkVolumeInputs& in) {
  return static_cast<double>(in.k) * (in.ranks - 1) / in.ranks * in.pair_bytes;
}
double oktopk_volume_high(const TopkVolumeInputs& in) {
  return 3.0 * static_cast<double>(in.k) * (in.ranks - 1) / in.ranks * in.pair_bytes;
}

template std::unique_ptr<TopkAllreduce<float>> make_oktopk<float>(CountedComm&, uint32_t, const TopkCollectiveConfig&);
template std::unique_ptr<TopkAllreduce<double>> make_oktopk<double>(CountedComm&, uint32_t,
                                                                    const TopkCollectiveConfig&);

}  // namespace mpisgd
