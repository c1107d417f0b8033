#include "jobs/run_identity.h"

#include <map>
#include <sstream>

#include <fmt/format.h>

#include "strategies/strategy.h"

namespace mpisgd {
namespace {

std::map<std::string, std::string> lines_of(const std::string& s) {
  std::map<std::string, std::string> out;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) {
    const auto eq = line.find('=');
    out[line.substr(0, eq)] = eq == std::string::npos ? "" : line.substr(eq + 1);
  }
  return out;
}

constexpr const char* kDeviceKey = "device";

}  // namespace

std::string run_identity(const TrainConfig& c, int ranks, uint32_t dim) {
  std::string s;
  auto add = [&s](const char* key, const auto& value) { s += fmt::format("{}={}\n", key, value); };
  add("ranks", ranks);
  add("threads", c.sgd.threads);
  add("strategy", c.strategy);
  add("model", c.model);
  // As settled (ovr or softmax) for K >= 3 classes; two-class runs record none, as
  // checkpoints from before the flag did not.
  if (!c.multiclass.empty()) add("multiclass", c.multiclass);
  // The GPU path sums in its own order on CUDA; runs on the CPU record none, as before.
  if (c.sgd.device.kind == DeviceKind::gpu) add(kDeviceKey, "gpu");
  add("lr-schedule", c.lr_schedule);
  add("lr", c.sgd.lr);
  // Part of AdaGrad's step; other schedules record none, as before it existed.
  if (c.sgd.adagrad_start > 0) add("adagrad-start", c.sgd.adagrad_start);
  add("l2", c.l2);
  add("batch", c.sgd.batch);
  add("seed", c.sgd.seed);
  add("features", dim);
  add("zero-based", c.zero_based);
  add("feature-order", c.feature_order);
  std::vector<std::pair<std::string, std::string>> lines;
  for (const StrategyFamily* family : strategy_families()) family->identity(c.strategy_flags, lines);
  for (const auto& [key, value] : lines) add(key.c_str(), value);
  return s;
}

std::vector<std::string> identity_differences(const std::string& saved, const std::string& now,
                                              std::vector<std::string>* rounding_only) {
  const auto a = lines_of(saved), b = lines_of(now);
  std::vector<std::string> out;
  auto differ = [&](const std::string& key, const std::string& what) {
    (rounding_only && key == kDeviceKey ? *rounding_only : out).push_back(key + ": " + what);
  };
  for (const auto& [key, value] : b) {
    const auto it = a.find(key);
    const std::string old = it == a.end() ? "(not recorded)" : it->second;
    if (old != value) differ(key, fmt::format("checkpoint has {}, this run {}", old, value));
  }
  for (const auto& [key, value] : a)
    if (!b.contains(key)) differ(key, fmt::format("checkpoint has {}, this run does not know it", value));
  return out;
}

}  // namespace mpisgd
