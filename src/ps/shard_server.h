#pragma once
// One parameter server: owns shard [begin, end) of the model and answers the workers'
// pulls and pushes one message at a time, in the order they come (Marian thesis
// Algorithm 2 and section 3.3; MPI-SGD's ParameterServer strategies, thesis section
// 4.2.2). Two ways to apply pushes:
//   - sync (BSP): a step's pushes are kept until all W are in, summed in worker order and
//     applied as one step, so the model does not depend on the order they arrived in and
//     equals allreduce's on the W workers; a pull for step s waits until step s - 1 is in.
//   - async: each push is applied as it arrives, as 1/W of a step (L2 decays at lambda/W
//     per push, so a round of W pushes decays as one synchronous step); a pull is answered
//     at once with the shard as it is, or under a staleness bound K (Stale Synchronous
//     Parallel, Ho et al. 2013) once every worker still in the epoch has pushed at least
//     s - K steps. The slowest worker's pulls always pass, so the bound cannot deadlock.
// Steps follow model/weights.h: lazy L2 as a scale, AdaGrad's sums kept here.
// With --drop-rate R a pull names no features and is answered with the largest 1 - R of
// what changed since the server last answered that worker (client_copies.h); with
// --overlap, with the values asked for and everything that changed since.
// Cost per worker step: the server receives 4 k_s + 8 m_s bytes and sends 4 k_s (k_s
// features pulled, m_s pushed in its shard), 3 messages; a step's work is O(sum m_s).
#include <cstdint>
#include <optional>
#include <vector>

#include "comm/counted_comm.h"
#include "comm/state_blob.h"
#include "model/weights.h"
#include "ps/channels.h"
#include "ps/client_copies.h"
#include "ps/index_set.h"
#include "ps/messages.h"
#include "ps/ps_config.h"
#include "sparse/stream.h"

namespace mpisgd {

// One epoch of a server.
struct ServerStats {
  double serve_s = 0;  // from the epoch's first message awaited to the last worker done
  double idle_s = 0;   // waiting for a message
  uint64_t pushes = 0;
  double staleness_sum = 0;  // over pushes: updates applied between the pull and the push
  uint64_t staleness_max = 0;
};

class ShardServer {
 public:
  enum class Mode { sync, async };

  // Workers are ranks [0, workers) of `comm`. Messages travel on `channels` (ranks as in
  // `comm`); their time and bytes are counted on `comm`, except those with this rank's own
  // worker, which stay in memory.
  ShardServer(CountedComm& comm, Channels channels, Range shard, int workers, Mode mode, int64_t max_staleness,
              const ParameterServerConfig& rules);

  // Returns once every worker said it is done with the epoch; by then every message a
  // worker sent in it has been received and every pull answered.
  void serve_epoch();
  // Async: an epoch is `pushes` worker steps pushed by all workers together (the steps
  // their rows make), not a pass of each worker over its own rows, so that a slow worker
  // does less of it and the others more instead of all waiting for it. Once they are in,
  // every answer says so and the workers stop, each after at most two more steps (the one
  // it had pulled for, and the one whose answer says so; under --overlap up to M more);
  // until then a worker whose rows ran out goes round them again.
  void share_epoch(uint64_t pushes) { epoch_pushes_ = pushes; }

  Range shard() const { return shard_; }
  float value(uint32_t local) const { return static_cast<float>(weights_.weight(local)); }
  const ServerStats& stats() const { return stats_; }

  // Checkpoints, between epochs: the shard's exact bits (its L2 scale and AdaGrad sums
  // with it) and its version.
  void save_state(StateWriter& out) const;
  void load_state(StateReader& in);

 private:
  struct HeldPull {
    int worker;
    Message request;
    double since;
  };

  // Receives the message a probe found (the first from its source, so in send order).
  void receive(Message& into, const MPI_Status& probed);
  bool may_answer(uint64_t step) const;
  bool epoch_over() const { return epoch_pushes_ && steps_ >= epoch_pushes_; }
  void answer(int worker, const Message& request, double held_s);
  void answer_held();
  // A push's pairs into index_ (shard-relative), value_, and its staleness into stats_.
  PushHeader decode_push(const Message& push);
  void apply(const Message& push);
  void apply_step_sum();
  // Applies index_, value_ as the sum of `steps` worker steps (--overlap): the L2 decay
  // of all of them, then the update.
  void take_steps(double eta, uint64_t steps);

  CountedComm& comm_;
  Channels channels_;
  Range shard_;
  int workers_;
  Mode mode_;
  int64_t max_staleness_;
  Weights weights_;
  // The shard's version: steps (sync) or pushes (async) applied since the start. A pull
  // answer carries it and the push after it sends it back, which gives its staleness.
  uint64_t version_ = 0;
  uint64_t epoch_pushes_ = 0;  // async: the epoch's pushes (0: each worker's own rows)
  ServerStats stats_;
  std::optional<ClientCopies> copies_;  // --drop-rate

  // This epoch.
  std::vector<uint64_t> pushed_;  // pushes received per worker
  std::vector<char> done_;
  int done_count_ = 0;
  uint64_t applied_ = 0;  // sync: steps applied
  uint64_t steps_ = 0;    // worker steps the pushes carried (more than pushes under --overlap)
  std::vector<HeldPull> held_;

  Message in_, out_;
  std::vector<Message> pending_;  // sync: each worker's push of the step being gathered
  int pending_count_ = 0;
  std::vector<uint32_t> index_;
  std::vector<float> value_, sum_;
  IndexSet touched_;
};

}  // namespace mpisgd
