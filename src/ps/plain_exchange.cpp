// A worker's plain step (worker_exchange.h): the pull names the batch's features, the push
// carries the whole update. Cost per step: 3 S alpha + (8 k + 8 m) beta for k features, m
// non-zeros (shard_client.h).
#include <vector>

#include "ps/model_copy.h"
#include "ps/worker_exchange.h"

namespace mpisgd {
namespace {

class PlainExchange final : public WorkerExchange {
 public:
  explicit PlainExchange(ShardClient& client) : client_(client) {}

  bool reads_features() const override { return true; }
  void start_epoch() override { step_ = 0; }
  void before_step(std::span<const uint32_t> features, Weights& w) override {
    client_.pull(step_, features, values_);
    assign_values(w, features, values_, scratch_);
  }
  uint64_t after_step(std::span<const Pair<float>> update, double eta, Weights& /*w*/) override {
    client_.push(step_++, eta, update);
    return update.size();
  }
  bool epoch_over() const override { return client_.epoch_over(); }

 private:
  ShardClient& client_;
  uint64_t step_ = 0;
  std::vector<float> values_, scratch_;
};

}  // namespace

std::unique_ptr<WorkerExchange> plain_exchange(ShardClient& client) { return std::make_unique<PlainExchange>(client); }

}  // namespace mpisgd
