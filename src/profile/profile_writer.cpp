#include "profile/profile_writer.h"

#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "comm/temp_files.h"

namespace mpisgd {
namespace {

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Column order of the CSV; JSON lines use the same names.
const char* const kSpreadNames[] = {"wall_s", "compute_s", "comm_s", "bytes_sent", "bytes_recv"};
// A strategy's own cells, in the header's order: empty where an epoch has none.
std::vector<std::string> strategy_cells(const std::vector<std::string>& names, const StrategyColumns& columns) {
  std::vector<std::string> cells(names.size());
  for (const auto& [name, value] : columns.cells)
    for (size_t i = 0; i < names.size(); ++i)
      if (names[i] == name) cells[i] = value;
  return cells;
}

}  // namespace

bool profile_is_json(const std::string& path) {
  if (ends_with(path, ".jsonl") || ends_with(path, ".json")) return true;
  if (ends_with(path, ".csv")) return false;
  throw std::invalid_argument("--profile " + path + ": name it .csv or .jsonl");
}

ProfileWriter::ProfileWriter(const std::string& path, RunInfo info)
    : path_(path), tmp_(path + ".tmp"), info_(std::move(info)), json_(profile_is_json(path)) {
  if (json_) return;
  out_ << "epoch,ranks,threads,strategy,model,dim,steps,rows";
  for (const char* name : kSpreadNames) out_ << ',' << name << "_min," << name << "_mean," << name << "_max";
  out_ << ",density,train_loss,test_loss," << (info_.classification ? "test_accuracy" : "test_rmse");
  for (const std::string& name : info_.strategy_columns) out_ << ',' << name;
  out_ << '\n';
}

void ProfileWriter::write(const EpochSummary& s) {
  const MinMeanMax* spread[] = {&s.wall_s, &s.compute_s, &s.comm_s, &s.bytes_sent, &s.bytes_received};
  std::string test_loss = s.test ? fmt::format("{:.9g}", s.test->loss) : "";
  std::string test_metric = s.test ? fmt::format("{:.9g}", s.test->metric) : "";
  if (json_) {
    out_ << fmt::format(R"({{"epoch":{},"ranks":{},"threads":{},"strategy":"{}","model":"{}","dim":{},"steps":{},"rows":{})",
                        s.epoch, s.ranks, info_.threads, info_.strategy, info_.model, info_.dim, s.steps, s.rows);
    for (size_t i = 0; i < 5; ++i)
      out_ << fmt::format(R"(,"{0}_min":{1:.9g},"{0}_mean":{2:.9g},"{0}_max":{3:.9g})", kSpreadNames[i], spread[i]->min,
                          spread[i]->mean, spread[i]->max);
    out_ << fmt::format(R"(,"density":{:.9g},"train_loss":{:.9g})", s.density, s.train_loss);
    if (s.test)
      out_ << fmt::format(R"(,"test_loss":{},"{}":{})", test_loss, info_.classification ? "test_accuracy" : "test_rmse",
                          test_metric);
    for (const auto& [name, value] : s.strategy.cells) out_ << fmt::format(R"(,"{}":{})", name, value);
    out_ << "}\n";
  } else {
    out_ << fmt::format("{},{},{},{},{},{},{},{}", s.epoch, s.ranks, info_.threads, info_.strategy, info_.model,
                        info_.dim, s.steps, s.rows);
    for (const auto* m : spread) out_ << fmt::format(",{:.9g},{:.9g},{:.9g}", m->min, m->mean, m->max);
    out_ << fmt::format(",{:.9g},{:.9g},{},{}", s.density, s.train_loss, test_loss, test_metric);
    for (const std::string& cell : strategy_cells(info_.strategy_columns, s.strategy)) out_ << ',' << cell;
    out_ << '\n';
  }
}

void ProfileWriter::commit() {
  TempFileGuard guard(tmp_);
  std::ofstream file(tmp_);
  file << out_.str();
  file.close();
  if (!file) {
    std::remove(tmp_.c_str());
    throw std::runtime_error(tmp_ + ": write failed");
  }
  if (std::rename(tmp_.c_str(), path_.c_str()) != 0) {
    std::remove(tmp_.c_str());
    throw std::runtime_error(path_ + ": cannot rename " + tmp_ + " into place");
  }
}

}  // namespace mpisgd
