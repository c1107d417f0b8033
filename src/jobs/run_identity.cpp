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
  if (c.sgd.device.kind == DeviceKind::gpu) add("device", "gpu");
  add("lr-schedule", c.lr_schedule);
  add("lr", c.sgd.lr);
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

std::vector<std::string> identity_differences(const std::string& saved, const std::string& now) {
  const auto a = lines_of(saved), b = lines_of(now);
  std::vector<std::string> out;
  for (const auto& [key, value] : b) {
    const auto it = a.find(key);
    const std::string old = it == a.end() ? "(not recorded)" : it->second;
    if (old != value) out.push_back(fmt::format("{}: checkpoint has {}, this run {}", key, old, value));
  }
  for (const auto& [key, value] : a)
    if (!b.contains(key)) out.push_back(fmt::format("{}: checkpoint has {}, this run does not know it", key, value));
  return out;
}

}  // namespace mpisgd
