// Dense allreduce: every rank scatters its sparse update into a dense vector of N floats
// and MPI_Allreduce sums them. Cost per step (bandwidth-optimal allreduce, thesis
// Table 3.1 "dense"): 2 log2(P) alpha + 2 (P-1)/P N beta, whatever the update's density.
// This is the baseline the sparse strategies are measured against.
#include <algorithm>
#include <stdexcept>

#include "sparse/error_feedback.h"
#include "strategies/strategy.h"

namespace mpisgd {
namespace {

class DenseAllreduce final : public Strategy {
 public:
  explicit DenseAllreduce(const StrategyContext& c) : comm_(c.comm), sum_(c.comm.size() > 1 ? c.dim : 0, 0.0f) {}

  uint64_t exchange(const Stream<float>& local, double eta, Weights& w) override {
    if (comm_.size() == 1) {  // the allreduce of one rank is the identity
      w.step_pairs(eta, local.pairs());
      return local.count();
    }
    for (const Pair<float>& p : local.pairs()) sum_[p.index] = p.value;
    comm_.allreduce_sum(sum_.data(), sum_.size());
    uint64_t nnz = w.step_dense(eta, sum_);
    std::fill(sum_.begin(), sum_.end(), 0.0f);
    return nnz;
  }
  bool passes_through() const override { return comm_.size() == 1; }

 private:
  CountedComm& comm_;
  std::vector<float> sum_;  // all zero between steps
};

// No flags of its own; it refuses top-k's, which it could only ignore.
class DenseFamily final : public StrategyFamily {
 public:
  void check(const std::string& /*strategy*/, bool own, const StrategyFlags& flags, int /*ranks*/) const override {
    if (own && flags.get<SparsifyOptions>().requested())
      throw std::invalid_argument("--density and --k sparsify the update, which the dense allreduce would send "
                                  "whole; use a sparse or top-k strategy");
  }
};

}  // namespace

const StrategyFamily& dense_family() {
  static const DenseFamily family;
  return family;
}

std::unique_ptr<Strategy> make_dense_allreduce(const StrategyContext& context) {
  return std::make_unique<DenseAllreduce>(context);
}

}  // namespace mpisgd
