#pragma once
// Gradient dropping on the way back (Marian thesis section 3.8, Algorithm 9, after Aji and
// Heafield 2017): a server keeps, for every worker, the values of its shard it last sent
// that worker, and answers a pull with what changed since, dropped at rate R as the pushes
// are: of the coordinates whose value differs from the worker's copy, the ceil((1-R) c)
// with the largest |difference| go out, c the coordinates the steps applied since the last
// answer changed; the others stay behind (the difference is their residual) and compete
// again at the next pull. A coordinate goes out as its new value, not
// as the difference: the same bytes, and the worker's copy then equals the server's bit for
// bit with no floating-point addition on either side.
// Only coordinates a step changed are tracked: lazy L2 shrinks every weight a little at
// every step, and that decay of coordinates nobody pushed reaches the workers when the
// model is gathered at the epoch's end, where every copy is the shard again (sync()).
// Memory: W copies of the shard (4 bytes per feature per worker). Cost: W insertions per
// coordinate a step changes; a pull costs O(n) for the n coordinates behind.
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "model/weights.h"
#include "ps/index_set.h"
#include "sparse/topk_select.h"

namespace mpisgd {

class ClientCopies {
 public:
  ClientCopies(uint32_t shard_length, int workers, double drop_rate);

  // Every worker's copy becomes the shard: at an epoch's start, when the workers hold the
  // model gathered at the last one's end.
  void sync(const Weights& shard);
  // A step changed these coordinates of the shard (shard-local indices).
  void changed(std::span<const uint32_t> local);
  // The answer to `worker`'s pull: shard-local indices (ascending) and their values; the
  // worker's copy takes them.
  void answer(int worker, const Weights& shard, std::vector<uint32_t>& index, std::vector<float>& value);

 private:
  double keep_;
  std::vector<std::vector<float>> copy_;
  std::vector<IndexSet> behind_;  // per worker: coordinates changed since they were last sent
  std::vector<uint64_t> fresh_;   // per worker: coordinates changed since its last answer
  std::unique_ptr<TopkSelector> exact_;
  std::vector<uint32_t> candidate_, kept_;
  std::vector<float> current_, difference_;
};

}  // namespace mpisgd
