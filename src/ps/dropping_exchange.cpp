// A worker's step under --drop-rate R (worker_exchange.h; Marian thesis section 3.8,
// Algorithms 8-9; Aji and Heafield 2017). A pull names no features: each server answers
// with the largest 1 - R of what changed since it last answered this worker
// (client_copies.h). Per step: 3 S alpha + 8 (1 - R) (m + c) beta, c the coordinates changed.
#include <vector>

#include "ps/model_copy.h"
#include "ps/worker_exchange.h"

namespace mpisgd {
namespace {

class DroppingExchange final : public WorkerExchange {
 public:
  DroppingExchange(ShardClient& client, double drop_rate, uint32_t dim, uint32_t columns)
      : client_(client), dropping_(gradient_dropping(drop_rate, dim, columns)) {}

  bool reads_features() const override { return false; }
  void start_epoch() override { step_ = 0; }
  void before_step(std::span<const uint32_t> features, Weights& w) override {
    client_.pull_changes(step_, features, values_, changed_, changed_values_);
    assign_values(w, changed_, changed_values_, scratch_);
  }
  uint64_t after_step(std::span<const Pair<float>> update, double eta, Weights& /*w*/) override {
    const Stream<float>& pushed = dropping_->select(update);
    client_.push(step_++, eta, pushed.pairs());
    return pushed.count();
  }
  bool epoch_over() const override { return client_.epoch_over(); }
  const SparseVector* residual() const override { return &dropping_->residual(); }
  void save_state(StateWriter& out) const override { dropping_->save_state(out); }
  void load_state(StateReader& in) override { dropping_->load_state(in); }

 private:
  ShardClient& client_;
  std::unique_ptr<ErrorFeedback> dropping_;
  uint64_t step_ = 0;
  std::vector<uint32_t> changed_;
  std::vector<float> values_, changed_values_, scratch_;
};

}  // namespace

std::unique_ptr<WorkerExchange> dropping_exchange(ShardClient& client, double drop_rate, uint32_t dim,
                                                  uint32_t columns) {
  return std::make_unique<DroppingExchange>(client, drop_rate, dim, columns);
}

std::unique_ptr<ErrorFeedback> gradient_dropping(double drop_rate, uint32_t dim, uint32_t columns) {
  SparsifyOptions o;
  o.select = "exact";
  o.keep = 1 - drop_rate;
  o.columns = columns;
  return std::make_unique<ErrorFeedback>(o, dim);
}

}  // namespace mpisgd
