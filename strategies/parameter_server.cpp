// Parameter servers: MPI-SGD's ParameterServer synchronous and asynchronous strategies
// (thesis sections 2.1 and 4.2.2; its only route to asynchronous SGD), sharded as in the
// Marian thesis (section 3.3). The last S ranks each own a contiguous shard of the model,
// balanced by traffic (src/ps/shard_map.h), and train nothing; each of the W = P - S
// workers pulls the features its next batch touches (refresh) and pushes its update split
// by shard (exchange).
//   ps-sync   servers sum a step's W pushes in worker order and apply them as one step,
//             then answer the next pulls: the model allreduce trains on the W workers.
//   ps-async  servers apply each push as it arrives; --max-staleness K lets a worker be at
//             most K steps ahead of the slowest (SSP); K = 0 waits at every step, which
//             is ps-sync, and runs as it. An epoch is as many pushes as the workers' rows
//             make batches, from whichever workers: a slow one does fewer of them and the
//             others go round their rows again, rather than all waiting for it.
// Cost per worker step: 3 S alpha + (8 k + 8 m) beta (k distinct features of the batch,
// m non-zeros of its update). A server takes its shard's part of every worker's traffic:
// with one server that is W (8 k + 8 m) beta per step, the bottleneck that made the
// thesis choose allreduce; S balanced shards divide it by S.
// --drop-rate R (Marian thesis section 3.8): pushes and pulls carry the largest 1 - R of
// each update, the rest kept as residuals (ps/dropping_exchange.cpp).
// --servers colocated (Marian thesis sections 3.3-3.5: a sharded server on every node):
// every rank trains and also serves a shard, balanced over the P ranks' rows, on a second
// thread (needs MPI_THREAD_MULTIPLE). W = S = P; a worker's part for its own shard never
// leaves the rank, so per step it sends (P - 1)/P of the traffic above, and each rank
// serves 1/P of every worker's instead of one server taking W times a worker's.
// --overlap (Marian thesis section 3.4): a worker's pushes and pulls run on a thread of
// their own while it computes up to M more batches on the values it has, summing their
// updates for the next push (ps/overlapped_client.h). Where a core is free for that
// thread, a step then costs the longer of its compute and its share of an exchange, not
// their sum; the pulls bring every changed coordinate, about W times a batch's features.
#include <spdlog/spdlog.h>

#include <exception>
#include <optional>
#include <stdexcept>
#include <thread>

#include "comm/job_error.h"
#include "ps/channels.h"
#include "ps/index_set.h"
#include "ps/model_copy.h"
#include "ps/overlapped_client.h"
#include "ps/ps_profile.h"
#include "ps/shard_client.h"
#include "ps/shard_map.h"
#include "ps/shard_server.h"
#include "ps/worker_exchange.h"
#include "strategies/strategy.h"

namespace mpisgd {
namespace {

// How a worker exchanges: --overlap and --drop-rate pick one of the pieces of
// ps/worker_exchange.h once, here.
std::unique_ptr<WorkerExchange> worker_exchange(ShardClient& client, CountedComm& main, uint32_t dim,
                                                uint32_t columns, const ParameterServerConfig& ps, bool sync) {
  if (ps.overlap)
    return std::make_unique<OverlappedClient>(
        client, main, dim, ps.max_overlap_steps, sync, ps.l2 != 0,
        ps.drop_rate > 0 ? gradient_dropping(ps.drop_rate, dim, columns) : nullptr);
  if (ps.drop_rate > 0) return dropping_exchange(client, ps.drop_rate, dim, columns);
  return plain_exchange(client);
}

class ParameterServer final : public Strategy {
 public:
  ParameterServer(const StrategyContext& c, const ParameterServerConfig& ps, const std::string& name,
                  ShardServer::Mode mode)
      : comm_(c.comm), mode_(mode), workers_(c.comm.size() - ps.server_ranks()),
        first_server_(ps.colocated ? 0 : workers_),
        map_(ShardMap::balance(*c.train, ps.batch, ps.shards(c.comm.size()), c.comm.raw(), c.columns)),
        columns_(c.columns), batch_features_(c.dim) {
    log_start(name, ps);
    Channels channels{comm_.raw(), comm_.raw()};
    if (ps.colocated) {
      server_comm_.emplace(comm_.raw(), CountedComm::Thread::background);
      replies_.emplace(comm_.raw());
      channels = {server_comm_->raw(), replies_->raw(), true};
    }
    const int s = comm_.rank() - first_server_;
    if (s >= 0)
      server_.emplace(server_comm_ ? *server_comm_ : comm_, channels, map_.shard(s), workers_, mode,
                      ps.max_staleness, ps);
    // --overlap: a worker's exchange thread counts on a communicator of its own (made on
    // every rank, as making one is collective); the training thread's waits for it are
    // timed on comm_. While an exchange runs the training thread waits for it outside MPI,
    // so with dedicated servers the exchange keeps MPI's blocking calls; only co-located
    // channels, where two threads of a rank are in MPI at once, poll (channel_waits.h).
    if (ps.overlap) exchange_comm_.emplace(comm_.raw(), CountedComm::Thread::background);
    if (comm_.rank() < workers_) {
      client_.emplace(exchange_comm_ ? *exchange_comm_ : comm_, channels, map_, first_server_);
      worker_ = worker_exchange(*client_, comm_, c.dim, c.columns, ps, mode == ShardServer::Mode::sync);
    }
    if (mode_ == ShardServer::Mode::async) {
      uint64_t pushes = client_ ? (c.train->rows() + ps.batch - 1) / ps.batch : 0;
      MPI_Allreduce(MPI_IN_PLACE, &pushes, 1, MPI_UINT64_T, MPI_SUM, comm_.raw());
      if (server_) server_->share_epoch(pushes);
    }
  }

  // A co-located server has a thread of its own: past an epoch's start (before_epoch) it
  // runs until after_epoch joins it, so it is never left running but by an exception out
  // of the epoch, which ends the job.
  ~ParameterServer() override {
    if (thread_.joinable()) {
      spdlog::critical("parameter server: an epoch ended without its server thread");
      abort_job(MPI_COMM_WORLD);
    }
  }
  ParameterServer(const ParameterServer&) = delete;
  ParameterServer& operator=(const ParameterServer&) = delete;

  Role role() const override { return client_ ? Role::train : Role::serve; }
  bool lockstep() const override { return mode_ == ShardServer::Mode::sync; }
  // ps-async: until the servers say the epoch's pushes are in (ShardServer::share_epoch).
  bool another_step(uint64_t /*taken*/, uint64_t own) const override {
    return own > 0 && !worker_->epoch_over();
  }
  // Workers keep nothing between epochs but the model, which the checkpoint holds, and
  // under --drop-rate their residual.
  void save_state(StateWriter& out) const override {
    if (server_) server_->save_state(out);
    if (worker_) worker_->save_state(out);
  }
  void load_state(StateReader& in) override {
    if (server_) server_->load_state(in);
    if (worker_) worker_->load_state(in);
  }
  const SparseVector* residual() const override { return worker_ ? worker_->residual() : nullptr; }

  void before_epoch(int /*epoch*/) override {
    if (worker_) worker_->start_epoch();
    if (exchange_comm_) exchange_start_ = exchange_comm_->stats();
    if (server_comm_) {
      server_start_ = server_comm_->stats();
      thread_ = std::thread([this] { serve_in_thread(); });
    }
  }
  void serve(int /*epoch*/) override { server_->serve_epoch(); }

  void refresh(const Dataset& data, std::span<const uint64_t> batch, Weights& w) override {
    features_.clear();
    if (worker_->reads_features()) batch_features(data, batch);
    worker_->before_step(features_, w);
  }

  uint64_t exchange(const Stream<float>& local, double eta, Weights& w) override {
    return worker_->after_step(local.pairs(), eta, w);
  }

  void after_epoch(int /*epoch*/, Weights& w) override {
    if (worker_) worker_->finish_epoch();
    if (client_) client_->done();
    if (thread_.joinable()) thread_.join();
    gather_model(comm_, map_, first_server_, server_ ? &*server_ : nullptr, w);
  }

  void add_to_record(EpochRecord& record) override {
    ParameterServerRecord& r = record_;
    r = {};
    r.trains = client_.has_value();
    // The server's and the exchange's threads' traffic, beside what the trainer counted
    // on the main thread.
    auto add_bytes = [&record](const CommStats& used) {
      record.bytes_sent += static_cast<double>(used.bytes_sent);
      record.bytes_received += static_cast<double>(used.bytes_received);
    };
    if (server_comm_) add_bytes(server_comm_->stats() - server_start_);
    if (exchange_comm_) add_bytes(exchange_comm_->stats() - exchange_start_);
    if (server_) {
      const ServerStats& s = server_->stats();
      r.serves = true;
      r.busy = s.serve_s > 0 ? (s.serve_s - s.idle_s) / s.serve_s : 0;
      r.pushes = static_cast<double>(s.pushes);
      r.staleness_sum = s.staleness_sum;
      r.staleness_max = static_cast<double>(s.staleness_max);
    }
    if (client_) {
      const ClientStats c = client_->take_stats();
      r.push_s = c.push_s;
      r.pull_s = c.pull_s;
      r.wait_s = c.wait_s;
    }
  }
  std::vector<std::string> profile_columns() const override { return parameter_server_columns(); }
  StrategyColumns epoch_columns(MPI_Comm comm) override {
    return to_columns(summarize_parameter_server(record_, comm));
  }

 private:
  // features_ = the weight slots of the batch's distinct features, ascending.
  void batch_features(const Dataset& data, std::span<const uint64_t> batch) {
    for (uint64_t r : batch)
      for (uint32_t i : data.row_index(r))
        for (uint32_t c = 0; c < columns_; ++c) batch_features_.insert(i * columns_ + c);
    batch_features_.drain(features_);
  }

  // A server error leaves every worker waiting for its answers: end the job, as the
  // trainer does for a dedicated server's.
  void serve_in_thread() {
    try {
      server_->serve_epoch();
    } catch (const std::exception& e) {
      spdlog::critical("parameter server thread: {}", e.what());
      abort_job(MPI_COMM_WORLD);
    }
  }

  void log_start(const std::string& name, const ParameterServerConfig& ps) const {
    if (comm_.rank() != 0) return;
    const int servers = map_.servers();
    std::string pace = mode_ == ShardServer::Mode::sync ? "every worker waits for the others at each step"
                       : ps.max_staleness == ParameterServerConfig::kUnbounded
                           ? "staleness unbounded (--max-staleness K bounds it)"
                           : "a worker runs at most " + std::to_string(ps.max_staleness) +
                                 (ps.max_staleness == 1 ? " step" : " steps") + " ahead of the slowest";
    auto ranks = [](int first, int count) {
      return count == 1 ? "rank " + std::to_string(first)
                        : "ranks " + std::to_string(first) + "-" + std::to_string(first + count - 1);
    };
    if (ps.colocated)
      spdlog::info("{}: {} worker{} ({}), each also serving a shard on a thread of its own (--servers colocated); {}",
                   name, workers_, workers_ == 1 ? "" : "s", ranks(0, workers_), pace);
    else
      spdlog::info("{}: {} worker{} ({}), {} server{} ({}); {}", name, workers_, workers_ == 1 ? "" : "s",
                   ranks(0, workers_), servers, servers == 1 ? "" : "s", ranks(workers_, servers), pace);
    if (ps.overlap)
      spdlog::info("  --overlap: a worker computes up to {} step{} while its push and pull are in flight{}",
                   ps.max_overlap_steps, ps.max_overlap_steps == 1 ? "" : "s",
                   mode_ == ShardServer::Mode::sync ? ", each push carrying exactly that many" : "");
    if (ps.drop_rate > 0)
      spdlog::info("  --drop-rate {:g}: pushes and pulls carry the largest {:g}% of each update, the rest kept as "
                   "residuals", ps.drop_rate, 100 * (1 - ps.drop_rate));
    for (int s = 0; s < servers; ++s)
      spdlog::info("  shard {} on rank {}: features [{}, {}), {} of them, {:.1f}% of the expected traffic", s,
                   first_server_ + s, map_.shard(s).begin, map_.shard(s).end, map_.shard(s).length(), 100 * map_.share(s));
  }

  CountedComm& comm_;
  ShardServer::Mode mode_;
  int workers_;
  int first_server_;  // server s is rank first_server_ + s
  ShardMap map_;
  uint32_t columns_;  // weights per feature
  // Co-located: the server thread's communicator (requests arrive there, its time and
  // bytes are counted there) and the one replies come back on (channels.h).
  std::optional<CountedComm> server_comm_;
  std::optional<ChannelComm> replies_;
  CommStats server_start_;
  std::thread thread_;
  std::optional<ShardServer> server_;
  std::optional<CountedComm> exchange_comm_;  // --overlap: the exchange thread's
  CommStats exchange_start_;
  std::optional<ShardClient> client_;
  std::unique_ptr<WorkerExchange> worker_;  // on workers
  ParameterServerRecord record_;  // the last epoch's, for epoch_columns()
  IndexSet batch_features_;
  std::vector<uint32_t> features_;
};

// The servers take the steps, by the trainer's rules.
ParameterServerConfig settings(const std::string& name, const StrategyContext& c) {
  if (!c.train) throw std::invalid_argument(name + ": the shards are balanced on the training rows, and none were given");
  ParameterServerConfig ps = c.flags.get<ParameterServerConfig>();
  ps.l2 = c.step.l2;
  ps.adagrad = c.step.adagrad;
  ps.adagrad_start = c.step.adagrad_start;
  ps.threads = c.step.threads;
  ps.batch = c.step.batch;
  return ps;
}

}  // namespace

std::unique_ptr<Strategy> make_ps_sync(const StrategyContext& context) {
  return std::make_unique<ParameterServer>(context, settings("ps-sync", context), "ps-sync", ShardServer::Mode::sync);
}

std::unique_ptr<Strategy> make_ps_async(const StrategyContext& context) {
  const ParameterServerConfig ps = settings("ps-async", context);
  const auto mode = ps.max_staleness == 0 ? ShardServer::Mode::sync : ShardServer::Mode::async;
  return std::make_unique<ParameterServer>(context, ps, "ps-async", mode);
}

}  // namespace mpisgd
