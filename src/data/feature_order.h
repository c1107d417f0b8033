#pragma once
// The order in which the model keeps its features: by popularity, so that the features
// most rows share also share cache lines.
//
// A LIBSVM file numbers features however its writer did; the generated files (and hashed
// feature ids) spread popular features over the whole index range, one per 64-byte line
// of the weight slots. An SGD epoch is then one cache miss per non-zero wherever the
// model outgrows the cache (Webspam: 133 MB of slots). Renumbered so that the most
// frequent features come first, the lines of the head are full of head features, the
// part of the model a batch keeps hitting is up to 8x denser, and an epoch takes about
// half as long on Webspam-like rows (docs/performance.md#foundation-make-bench).
//
// Index ranges must stay evenly loaded, though: split allreduces and parameter-server
// shards give each rank a contiguous range. So popularity ranks are dealt round-robin
// into stripes, the near-equal ranges of owned_range (sparse/range.h), each holding its
// ranks in order: every stripe starts with its share of the head, and a job's P ranges
// are whole stripes. Stripes cost locality: a sorted row jumps between them, which the
// cache's stream prefetcher does not follow, so epochs slow down past a few dozen
// (docs/design.md#feature-order). Hence the fewest stripes that are a multiple of P, and
// at least 16 so that a parameter server's shards and any other split stay roughly even.
//
// The order lives inside a run only: the model file (and so predictions) uses the file's
// numbering, and a checkpoint records which order the run used (--feature-order).
#include <cstdint>
#include <span>
#include <vector>

#include <mpi.h>

#include "comm/sum_in_place.h"
#include "data/big_array.h"
#include "data/dataset.h"

namespace mpisgd {

class FeatureOrder {
 public:
  static constexpr int kMinStripes = 16;
  // The fewest stripes that are a multiple of `ranks` and at least kMinStripes.
  static uint32_t stripes_for(int ranks);

  // Features by descending count, ties in file order, dealt into `stripes` stripes;
  // counts.size() is N.
  static FeatureOrder from_counts(std::span<const uint32_t> counts, uint32_t stripes);
  // Collective over `comm`: from the count of every feature in the rows of all ranks
  // (ranks without rows count none), so every rank gets the same order. `how` sums the
  // counts; past its pairwise_ranks every rank also ranks all N itself.
  static FeatureOrder by_popularity(const Dataset& train, MPI_Comm comm, const SumInPlace& how = {});

  uint32_t dim() const { return static_cast<uint32_t>(internal_.size()); }
  // The model's index of the file's feature i < dim().
  uint32_t internal(uint32_t i) const { return internal_[i]; }

  // Renumbers d's rows (read from a binary cache: into memory of their own) and sorts
  // each row again. Indices >= dim() (test rows may name features the training rows do
  // not) keep their number, and so stay at the end of their row. Uses `threads` threads.
  void apply(Dataset& d, int threads) const;

  // Model values indexed by the model's order, returned in the file's order; with K
  // values per feature (K columns, feature-major), each feature's K move together.
  std::vector<double> to_file_order(std::span<const double> internal_values) const;

 private:
  HugePageArray<uint32_t> internal_;  // internal_[file index]
};

}  // namespace mpisgd
