#pragma once
// A strategy that hands every hook to another, for tests that change one or two of them
// (a worker slowed between its pull and its push, one held back until the others are
// done) and must leave the rest as the strategy does it.
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "strategies/strategy.h"

namespace mpisgd::test {

class ForwardingStrategy : public Strategy {
 public:
  explicit ForwardingStrategy(std::unique_ptr<Strategy> inner) : inner_(std::move(inner)) {}

  Role role() const override { return inner_->role(); }
  void serve(int epoch) override { inner_->serve(epoch); }
  bool lockstep() const override { return inner_->lockstep(); }
  bool another_step(uint64_t taken, uint64_t own) const override { return inner_->another_step(taken, own); }
  void before_epoch(int epoch) override { inner_->before_epoch(epoch); }
  void refresh(const Dataset& data, std::span<const uint64_t> batch, Weights& w) override {
    inner_->refresh(data, batch, w);
  }
  uint64_t exchange(const Stream<float>& local, double eta, Weights& w) override {
    return inner_->exchange(local, eta, w);
  }
  bool passes_through() const override { return inner_->passes_through(); }
  const SparseVector* residual() const override { return inner_->residual(); }
  void after_epoch(int epoch, Weights& w) override { inner_->after_epoch(epoch, w); }
  void add_to_record(EpochRecord& record) override { inner_->add_to_record(record); }
  std::vector<std::string> profile_columns() const override { return inner_->profile_columns(); }
  StrategyColumns epoch_columns(MPI_Comm comm) override { return inner_->epoch_columns(comm); }
  void save_state(StateWriter& out) const override { inner_->save_state(out); }
  void load_state(StateReader& in) override { inner_->load_state(in); }

 private:
  std::unique_ptr<Strategy> inner_;
};

}  // namespace mpisgd::test
