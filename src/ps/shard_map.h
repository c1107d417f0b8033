#pragma once
// The split of the features [0, N) over S parameter servers into contiguous shards
// (Marian thesis section 3.3, the sharded server after Dean et al. 2012). Server s owns
// shard [bounds[s], bounds[s+1]) and is rank W + s: the servers are the last S ranks.
//
// Equal index ranges would not balance the servers: on URL-like data the head features,
// in nearly every batch, sit at low indices, so the first server would answer most of
// the pulls and take most of the pushes. The shards are cut instead so that each holds
// about 1/S of the expected traffic. A feature travels once per mini-batch that touches
// it (pulled, then pushed back), so its traffic per epoch is the number of batches that
// hold it, counted on the workers' rows at start:
//   t_i = sum over workers r of  steps_r (1 - (1 - c_ri / n_r)^B_r)
// (c_ri: rows of worker r holding feature i, n_r: its rows, B_r = min(B, n_r), batches
// drawn from a shuffle). Cost at start: one reduction of N floats to rank 0, then the
// S + 1 bounds broadcast.
#include <cstdint>
#include <span>
#include <vector>

#include <mpi.h>

#include "data/dataset.h"
#include "sparse/stream.h"

namespace mpisgd {

class ShardMap {
 public:
  // Collective over `comm`: every rank adds the traffic of its rows (servers have none).
  // With `columns` K > 1 the model keeps K weights per feature (slots i K .. i K + K - 1):
  // shards hold whole features, their bounds in slots.
  static ShardMap balance(const Dataset& rows, uint64_t batch, int servers, MPI_Comm comm, uint32_t columns = 1);

  // `traffic[s]`: the expected traffic of shard s, for the log.
  ShardMap(std::vector<uint32_t> bounds, std::vector<double> traffic);

  int servers() const { return static_cast<int>(bounds_.size()) - 1; }
  Range shard(int s) const { return {bounds_[static_cast<size_t>(s)], bounds_[static_cast<size_t>(s) + 1]}; }
  // Expected fraction of the traffic shard s takes (0 when there is none).
  double share(int s) const;

  // For ascending `indices`: cuts[s] is the position of the first one in shard s, and
  // cuts[S] = indices.size(), so shard s's part is [cuts[s], cuts[s+1]).
  void cut(std::span<const uint32_t> indices, std::vector<size_t>& cuts) const;
  // The same for an update's pairs, by their indices.
  void cut(std::span<const Pair<float>> pairs, std::vector<size_t>& cuts) const;

 private:
  std::vector<uint32_t> bounds_;
  std::vector<double> traffic_;
};

}  // namespace mpisgd
