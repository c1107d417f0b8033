#include "ps/overlapped_client.h"

#include <utility>

#include "ps/model_copy.h"

namespace mpisgd {

OverlappedClient::OverlappedClient(ShardClient& client, CountedComm& main, uint32_t dim, uint64_t max_steps,
                                   bool fixed_period, bool decays, std::unique_ptr<ErrorFeedback> dropping)
    : client_(client), main_(main), max_steps_(max_steps), fixed_period_(fixed_period), decays_(decays),
      dropping_(std::move(dropping)), sum_(dim, 0.0f), touched_(dim) {}

void OverlappedClient::before_step(std::span<const uint32_t> features, Weights& w) {
  if (task_.started()) {
    const bool due = pending_steps_ >= max_steps_ || (!fixed_period_ && task_.finished());
    if (!due) return;
    collect(&w);
  }
  launch(features);
  if (max_steps_ == 0) collect(&w);
}

uint64_t OverlappedClient::after_step(std::span<const Pair<float>> update, double eta, Weights& w) {
  for (const Pair<float>& p : update) {
    sum_[p.index] += p.value;
    touched_.insert(p.index);
  }
  // With M = 0 nothing is computed while an exchange is in flight: the next values come in
  // before the next batch, as without --overlap.
  if (max_steps_ > 0) w.step_pairs(eta, update);
  if (pending_steps_ == 0) pending_versions_ = taken_in_;
  ++pending_steps_;
  eta_ = eta;
  return update.size();
}

void OverlappedClient::finish_epoch() {
  collect(nullptr);
  if (pulls_ > 0) {
    drain_pending();
    const uint64_t step = pulls_ - 1, steps = pending_steps_;
    const double eta = eta_;
    pending_steps_ = 0;
    task_.start([this, step, steps, eta] { client_.push(step, eta, pushed_, steps, pushed_versions_); });
    collect(nullptr);
  }
  pulls_ = 0;
  epoch_over_ = false;
  // The next epoch starts on the gathered model; until its first values come in, pushes
  // count staleness from the last pull's versions.
  taken_in_.clear();
}

void OverlappedClient::launch(std::span<const uint32_t> features) {
  const bool push = pulls_ > 0;
  if (push) drain_pending();
  const uint64_t steps = pending_steps_, step = pulls_++;
  const double eta = eta_;
  pending_steps_ = 0;
  features_.assign(features.begin(), features.end());
  task_.start([this, push, steps, step, eta] {
    if (push) client_.push(step - 1, eta, pushed_, steps, pushed_versions_);
    client_.pull_changes(step, features_, values_, changed_, changed_values_);
  });
}

void OverlappedClient::collect(Weights* w) {
  if (!task_.started()) return;
  {
    CountedComm::Timed timed(main_, "a parameter-server exchange");
    task_.wait();
  }
  epoch_over_ = client_.epoch_over();
  taken_in_ = client_.versions();
  if (!w) return;
  // A coordinate in both lists is written twice and its steps taken again once.
  assign_values(*w, changed_, changed_values_, scratch_);
  reapply_pending(changed_, *w);
  assign_values(*w, features_, values_, scratch_);
  reapply_pending(features_, *w);
}

void OverlappedClient::reapply_pending(std::span<const uint32_t> assigned, Weights& w) {
  own_index_.clear();
  own_value_.clear();
  for (uint32_t i : assigned) {
    if (sum_[i] == 0) continue;
    own_index_.push_back(i);
    own_value_.push_back(sum_[i]);
  }
  w.step_sparse(eta_, own_index_, own_value_);
}

void OverlappedClient::drain_pending() {
  drained_.clear();
  touched_.drain(drained_);
  push_.resize(drained_.size());
  for (size_t j = 0; j < drained_.size(); ++j) {
    push_[j] = {drained_[j], sum_[drained_[j]]};
    sum_[drained_[j]] = 0;
  }
  pushed_ = dropping_ ? dropping_->select(push_).pairs() : std::span<const Pair<float>>(push_);
  pushed_versions_ = pending_versions_;
}

}  // namespace mpisgd
