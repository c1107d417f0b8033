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
// Parameter servers: spreads over the workers, then over the servers.
const char* const kServerSpreadNames[] = {"push_s", "pull_s", "wait_s", "server_busy"};

std::vector<const MinMeanMax*> server_spreads(const ParameterServerSummary& ps) {
  return {&ps.push_s, &ps.pull_s, &ps.wait_s, &ps.busy};
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
  if (info_.parameter_server) {
    out_ << ",workers,servers";
    for (const char* name : kServerSpreadNames) out_ << ',' << name << "_min," << name << "_mean," << name << "_max";
    out_ << ",staleness_mean,staleness_max";
  }
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
    if (s.ps) {
      out_ << fmt::format(R"(,"workers":{},"servers":{})", s.ps->workers, s.ps->servers);
      const auto ps = server_spreads(*s.ps);
      for (size_t i = 0; i < ps.size(); ++i)
        out_ << fmt::format(R"(,"{0}_min":{1:.9g},"{0}_mean":{2:.9g},"{0}_max":{3:.9g})", kServerSpreadNames[i],
                            ps[i]->min, ps[i]->mean, ps[i]->max);
      out_ << fmt::format(R"(,"staleness_mean":{:.9g},"staleness_max":{:.9g})", s.ps->staleness_mean,
                          s.ps->staleness_max);
    }
    out_ << "}\n";
  } else {
    out_ << fmt::format("{},{},{},{},{},{},{},{}", s.epoch, s.ranks, info_.threads, info_.strategy, info_.model,
                        info_.dim, s.steps, s.rows);
    for (const auto* m : spread) out_ << fmt::format(",{:.9g},{:.9g},{:.9g}", m->min, m->mean, m->max);
    out_ << fmt::format(",{:.9g},{:.9g},{},{}", s.density, s.train_loss, test_loss, test_metric);
    if (info_.parameter_server) {
      const ParameterServerSummary ps = s.ps.value_or(ParameterServerSummary{});
      out_ << fmt::format(",{},{}", ps.workers, ps.servers);
      for (const auto* m : server_spreads(ps)) out_ << fmt::format(",{:.9g},{:.9g},{:.9g}", m->min, m->mean, m->max);
      out_ << fmt::format(",{:.9g},{:.9g}", ps.staleness_mean, ps.staleness_max);
    }
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
