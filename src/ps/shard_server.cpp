#include "ps/shard_server.h"

#include "ps/channel_waits.h"

#include <algorithm>
#include <stdexcept>

namespace mpisgd {

ShardServer::ShardServer(CountedComm& comm, Channels channels, Range shard, int workers, Mode mode,
                         int64_t max_staleness, const ParameterServerConfig& rules)
    : comm_(comm), channels_(channels), shard_(shard), workers_(workers), mode_(mode), max_staleness_(max_staleness),
      weights_(shard.length(), mode == Mode::sync ? rules.l2 : rules.l2 / workers, rules.adagrad, rules.threads,
               static_cast<float>(rules.adagrad_start)),
      pushed_(static_cast<size_t>(workers)), done_(static_cast<size_t>(workers)),
      pending_(mode == Mode::sync ? static_cast<size_t>(workers) : 0), sum_(mode == Mode::sync ? shard.length() : 0),
      touched_(mode == Mode::sync ? shard.length() : 0) {
  if (rules.drop_rate > 0 || rules.overlap) copies_.emplace(shard.length(), workers, rules.drop_rate);
}

void ShardServer::serve_epoch() {
  std::fill(pushed_.begin(), pushed_.end(), 0);
  std::fill(done_.begin(), done_.end(), 0);
  done_count_ = 0;
  applied_ = 0;
  steps_ = 0;
  stats_ = {};
  if (copies_) copies_->sync(weights_);
  const double start = MPI_Wtime();
  while (done_count_ < workers_) {
    MPI_Status status;
    const double wait_from = MPI_Wtime();
    {
      // Waiting here while the workers compute is the server's normal state, not a stall.
      CountedComm::Timed timed(comm_, "a request", WaitKind::idle);
      probe(channels_, MPI_ANY_SOURCE, MPI_ANY_TAG, channels_.requests, status);
    }
    stats_.idle_s += MPI_Wtime() - wait_from;
    const int worker = status.MPI_SOURCE;
    if (worker < 0 || worker >= workers_) throw std::logic_error("parameter server: a message from a rank that is no worker");
    const auto w = static_cast<size_t>(worker);
    switch (status.MPI_TAG) {
      case kTagPull:
        receive(in_, status);
        if (may_answer(in_.header<PullHeader>().step)) {
          answer(worker, in_, 0);
        } else {
          held_.push_back({worker, std::move(in_), MPI_Wtime()});
          in_ = Message();
        }
        break;
      case kTagPush:
        ++pushed_[w];
        ++stats_.pushes;
        if (mode_ == Mode::sync) {
          receive(pending_[w], status);
          steps_ += pending_[w].header<PushHeader>().steps;
          if (++pending_count_ == workers_) apply_step_sum();
        } else {
          receive(in_, status);
          steps_ += in_.header<PushHeader>().steps;
          apply(in_);
        }
        break;
      case kTagDone:
        receive(in_, status);
        done_[w] = 1;
        ++done_count_;
        break;
      default:
        throw std::logic_error("parameter server: unknown message tag " + std::to_string(status.MPI_TAG));
    }
    answer_held();
  }
  if (!held_.empty() || pending_count_) throw std::logic_error("parameter server: epoch ended with requests open");
  stats_.serve_s = MPI_Wtime() - start;
}

void ShardServer::receive(Message& into, const MPI_Status& probed) {
  CountedComm::Timed timed(comm_, "a worker's message");
  int bytes = 0;
  MPI_Get_count(&probed, MPI_BYTE, &bytes);
  into.resize(static_cast<size_t>(bytes));
  mpisgd::receive(comm_, channels_, into.data(), bytes, probed.MPI_SOURCE, probed.MPI_TAG, channels_.requests);
}

bool ShardServer::may_answer(uint64_t step) const {
  if (mode_ == Mode::sync) return step <= applied_;
  if (max_staleness_ == ParameterServerConfig::kUnbounded || epoch_over()) return true;
  for (size_t u = 0; u < pushed_.size(); ++u)
    if (!done_[u] && pushed_[u] + static_cast<uint64_t>(max_staleness_) < step) return false;
  return true;
}

void ShardServer::answer(int worker, const Message& request, double held_s) {
  const size_t k = request.items<PullHeader>(sizeof(uint32_t));
  index_.resize(k);
  request.read<PullHeader>(0, k, index_.data());
  value_.resize(k);
  for (size_t j = 0; j < k; ++j) value_[j] = value(index_[j] - shard_.begin);
  out_.start(ValuesHeader{version_, held_s, epoch_over()});
  out_.append<float>(value_);
  if (copies_) {
    copies_->answer(worker, weights_, index_, value_);
    for (uint32_t& i : index_) i += shard_.begin;
    out_.append<uint32_t>(index_);
    out_.append<float>(value_);
  }
  CountedComm::Timed timed(comm_, "a reply to a worker");
  send(comm_, channels_, out_.data(), static_cast<int>(out_.size()), worker, kTagValues, channels_.replies);
}

void ShardServer::answer_held() {
  for (size_t j = 0; j < held_.size();) {
    if (!may_answer(held_[j].request.header<PullHeader>().step)) {
      ++j;
      continue;
    }
    answer(held_[j].worker, held_[j].request, MPI_Wtime() - held_[j].since);
    held_.erase(held_.begin() + static_cast<ptrdiff_t>(j));
  }
}

PushHeader ShardServer::decode_push(const Message& push) {
  const auto h = push.header<PushHeader>();
  const size_t m = push.items<PushHeader>(sizeof(uint32_t) + sizeof(float));
  index_.resize(m);
  value_.resize(m);
  push.read<PushHeader>(0, m, index_.data());
  push.read<PushHeader>(m, m, value_.data());
  for (uint32_t& i : index_) i -= shard_.begin;
  const uint64_t stale = version_ - h.version;
  stats_.staleness_sum += static_cast<double>(stale);
  stats_.staleness_max = std::max(stats_.staleness_max, stale);
  return h;
}

void ShardServer::apply(const Message& push) {
  const auto h = decode_push(push);
  take_steps(h.eta, h.steps);
  if (copies_) copies_->changed(index_);
  ++version_;
}

void ShardServer::apply_step_sum() {
  for (const Message& push : pending_) {
    decode_push(push);
    for (size_t j = 0; j < index_.size(); ++j) {
      sum_[index_[j]] += value_[j];
      touched_.insert(index_[j]);
    }
  }
  index_.clear();
  touched_.drain(index_);
  value_.resize(index_.size());
  for (size_t j = 0; j < index_.size(); ++j) {
    value_[j] = sum_[index_[j]];
    sum_[index_[j]] = 0;
  }
  // Every worker takes the step with the same rate and, under --overlap, sums as many
  // steps into it; the first push says which.
  const auto first = pending_.front().header<PushHeader>();
  take_steps(first.eta, first.steps);
  if (copies_) copies_->changed(index_);
  pending_count_ = 0;
  ++applied_;
  ++version_;
}

void ShardServer::take_steps(double eta, uint64_t steps) {
  for (uint64_t n = 1; n < steps; ++n) weights_.step_sparse(eta, {}, {});
  weights_.step_sparse(eta, index_, value_);
}

void ShardServer::save_state(StateWriter& out) const {
  weights_.save_state(out);
  out.put(version_);
}

void ShardServer::load_state(StateReader& in) {
  weights_.load_state(in);
  version_ = in.get<uint64_t>();
}

}  // namespace mpisgd
