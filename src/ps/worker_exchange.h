#pragma once
// A worker's side of a parameter-server step, in one of three ways, chosen once at start:
//   plain      pulls the values of the batch's features, pushes the update (ShardClient);
//   dropping   --drop-rate R (Marian thesis section 3.8, Algorithms 8-9): pushes the
//              largest 1 - R of update plus residual, and pulls name no features: each
//              server sends the largest 1 - R of what changed since it last answered;
//   overlapped --overlap (section 3.4): a thread of its own exchanges while the worker
//              computes the next batches (overlapped_client.h), dropping or not.
// The strategy (strategies/parameter_server.cpp) calls the one it made at every step, with
// no branch on the flags of its own.
#include <cstdint>
#include <memory>
#include <span>

#include "comm/state_blob.h"
#include "model/weights.h"
#include "ps/shard_client.h"
#include "sparse/error_feedback.h"
#include "sparse/sparse_vector.h"
#include "sparse/stream.h"

namespace mpisgd {

class WorkerExchange {
 public:
  virtual ~WorkerExchange() = default;

  // Whether before_step() reads the batch's features; the worker collects them only then.
  virtual bool reads_features() const = 0;
  virtual void start_epoch() {}
  // Before a batch: makes `w` current for it. `features`: the batch's distinct features,
  // ascending (none unless reads_features()).
  virtual void before_step(std::span<const uint32_t> features, Weights& w) = 0;
  // After a batch: hands `update` (the worker's share of the mean gradient) to the servers,
  // who step with `eta`. Returns the non-zeros sent.
  virtual uint64_t after_step(std::span<const Pair<float>> update, double eta, Weights& w) = 0;
  // After the epoch's last step: nothing of the epoch is left to push.
  virtual void finish_epoch() {}
  // ps-async: a server said the epoch's pushes are in.
  virtual bool epoch_over() const = 0;

  // What the worker holds back for later pushes (gradient dropping's residual), or null,
  // and with it the state a checkpoint keeps.
  virtual const SparseVector* residual() const { return nullptr; }
  virtual void save_state(StateWriter& /*out*/) const {}
  virtual void load_state(StateReader& /*in*/) {}
};

std::unique_ptr<WorkerExchange> plain_exchange(ShardClient& client);
std::unique_ptr<WorkerExchange> dropping_exchange(ShardClient& client, double drop_rate, uint32_t dim,
                                                  uint32_t columns);
// The error feedback of --drop-rate R: the exact top 1 - R of each update plus residual.
std::unique_ptr<ErrorFeedback> gradient_dropping(double drop_rate, uint32_t dim, uint32_t columns);

}  // namespace mpisgd
