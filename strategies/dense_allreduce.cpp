// Dense allreduce: every rank scatters its sparse update into a dense vector of N floats
// and MPI_Allreduce sums them. Cost per step (bandwidth-optimal allreduce, thesis
// Table 3.1 "dense"): 2 log2(P) alpha + 2 (P-1)/P N beta, whatever the update's density.
// This is the baseline the sparse strategies are measured against.
#include <stdexcept>

#include "sparse/error_feedback.h"
#include "strategies/strategy.h"

namespace mpisgd {
namespace {

class DenseAllreduce final : public SummingStrategy {
 public:
  explicit DenseAllreduce(const StrategyContext& c)
      : comm_(c.comm), dim_(c.dim), sum_(c.comm.size() > 1 ? c.dim : 0) {}

  const Stream<float>& combine(const Stream<float>& local) override {
    if (comm_.size() == 1) return local;  // the allreduce of one rank is the identity
    sum_.set_zero_dense(dim_);
    float* sum = sum_.values().data();
    for (const Pair<float>& p : local.pairs()) sum[p.index] = p.value;
    comm_.allreduce_sum(sum, dim_);
    return sum_;
  }
  bool passes_through() const override { return comm_.size() == 1; }

 private:
  CountedComm& comm_;
  uint32_t dim_;
  Stream<float> sum_;
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
