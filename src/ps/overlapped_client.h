#pragma once
// A worker's side of the parameter-server protocol under --overlap (Marian thesis sections
// 2.3.6 and 3.4, overlap by double buffering): a thread of its own pushes what the worker
// has summed and pulls, while the training thread goes on with the next batches on the
// values it has, summing their updates. Exchange j is the push of step j - 1 and the pull
// of step j: the messages, in the order, that a worker without overlap sends, so the
// servers' protocol is unchanged but for the steps a push carries.
//   ps-async  a new exchange starts as soon as the last one is in; the training thread
//             waits for one only once it has taken M steps since it started
//             (--max-overlap-steps).
//   ps-sync   every exchange carries exactly M steps, so that all workers push the same
//             steps and the model does not depend on timing.
// The batch that reads a pull's values is not known when the pull leaves (it is M steps
// on), so a pull asks, as Marian's clients do, for every coordinate changed since the
// server last answered this worker (client_copies.h): the worker's whole copy of the
// model is then at most one exchange behind the servers, up to 2M steps. With L2, whose
// decay changes every value at every step, a pull also names the features of the batch
// at hand (the decay of the others reaches the workers at the epoch's end, as under
// --drop-rate).
// A worker takes its own steps on its copy at once (add), and when values come in it
// takes again those of its steps the servers have not yet seen (Marian's option of
// applying the summed gradients to the swapped-in parameters): without that, the M
// batches between two exchanges would all read the same values and their summed update
// would be one step of M times the learning rate, which diverges where one step is
// already near the largest stable rate (the default, sgd/step_defaults.h).
// The other workers' steps still reach a batch up to 2M steps late, and delayed
// gradients shrink the largest stable learning rate: near it, M or --lr must come down
// (measured in docs/performance.md, parameter servers).
// M = 0 waits for each exchange at once: the batch's values are then those of a run
// without --overlap, and so is the model, bit for bit.
// Cost per exchange: as one step of ShardClient carrying up to M steps' updates summed,
// plus the changed coordinates: about W - 1 other workers' M updates, 8 bytes each.
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "comm/counted_comm.h"
#include "model/weights.h"
#include "ps/background_task.h"
#include "ps/index_set.h"
#include "ps/shard_client.h"
#include "ps/worker_exchange.h"
#include "sparse/error_feedback.h"
#include "sparse/sparse_vector.h"

namespace mpisgd {

class OverlappedClient final : public WorkerExchange {
 public:
  // `client` talks on a CountedComm of the background thread's own; `main` is the training
  // thread's, on which its waits are timed (and watched). `decays`: L2 changes every value
  // at every step. `dropping`: --drop-rate's error feedback, or null.
  OverlappedClient(ShardClient& client, CountedComm& main, uint32_t dim, uint64_t max_steps, bool fixed_period,
                   bool decays, std::unique_ptr<ErrorFeedback> dropping);

  // Without L2 a value changes only when pushed, and every change comes with the pulls:
  // naming the batch's features would only send some values twice.
  bool reads_features() const override { return decays_ && !dropping_; }
  // Takes in a finished exchange's values and starts the next exchange when it is due.
  void before_step(std::span<const uint32_t> features, Weights& w) override;
  // Adds a step's update to what the next push carries and takes it on `w` at once.
  uint64_t after_step(std::span<const Pair<float>> update, double eta, Weights& w) override;
  // Waits for the exchange in flight and pushes what is left.
  void finish_epoch() override;
  // As of the last exchange taken in.
  bool epoch_over() const override { return epoch_over_; }
  const SparseVector* residual() const override { return dropping_ ? &dropping_->residual() : nullptr; }
  void save_state(StateWriter& out) const override {
    if (dropping_) dropping_->save_state(out);
  }
  void load_state(StateReader& in) override {
    if (dropping_) dropping_->load_state(in);
  }

 private:
  void launch(std::span<const uint32_t> features);
  void collect(Weights* w);  // waits for the exchange in flight; its values into *w
  void drain_pending();      // the summed steps into push_, the sum emptied
  // Takes again, on the coordinates just given the servers' values, the steps summed
  // since the exchange in flight left.
  void reapply_pending(std::span<const uint32_t> assigned, Weights& w);

  ShardClient& client_;
  CountedComm& main_;
  uint64_t max_steps_;
  bool fixed_period_;
  bool decays_;
  std::unique_ptr<ErrorFeedback> dropping_;
  BackgroundTask task_;
  bool epoch_over_ = false;
  uint64_t pulls_ = 0;  // this epoch's exchanges, the next pull's step

  // The training thread's side: the steps summed since the last exchange started.
  std::vector<float> sum_;
  IndexSet touched_;
  uint64_t pending_steps_ = 0;
  double eta_ = 0;
  // Per server, the version of the values last taken in, and of those the first summed
  // step was computed on: the servers count a push's staleness from it.
  std::vector<uint64_t> taken_in_, pending_versions_;
  std::vector<uint32_t> own_index_;
  std::vector<float> own_value_;

  // The exchange's side, untouched by the training thread while it is in flight.
  std::vector<uint32_t> drained_;
  std::vector<Pair<float>> push_;
  std::span<const Pair<float>> pushed_;
  std::vector<uint64_t> pushed_versions_;
  std::vector<uint32_t> features_, changed_;
  std::vector<float> values_, changed_values_, scratch_;
};

}  // namespace mpisgd
