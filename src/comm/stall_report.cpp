#include "comm/stall_report.h"

#include <algorithm>
#include <cstring>
#include <map>

#include <fmt/format.h>

namespace mpisgd {
namespace {

std::string rank_list(const std::vector<int>& ranks) {
  std::string text = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size(); ++i) text += (i ? ", " : "") + std::to_string(ranks[i]);
  return text;
}

std::string wait_range(uint64_t lo, uint64_t hi) {
  return lo == hi ? fmt::format("wait #{}", lo) : fmt::format("waits #{}-#{}", lo, hi);
}

}  // namespace

bool wait_timed_out(const WaitSnapshot& s, int64_t now_ns, double timeout_s) {
  if (s.since_ns == 0 || s.kind == WaitKind::idle || timeout_s <= 0) return false;
  return static_cast<double>(now_ns - s.since_ns) * 1e-9 > timeout_s;
}

RankState rank_state(const WaitSnapshot& s, int64_t now_ns, bool tripped) {
  RankState r;
  r.tripped = tripped ? 1 : 0;
  r.waits = s.waits;
  if (s.since_ns == 0) return r;
  r.activity = s.kind == WaitKind::idle ? Activity::serving : Activity::waiting;
  r.waited_s = static_cast<double>(now_ns - s.since_ns) * 1e-9;
  if (s.op) std::strncpy(r.op, s.op, sizeof r.op - 1);
  return r;
}

std::string stall_message(const std::vector<std::optional<RankState>>& by_rank, double timeout_s, double grace_s) {
  std::vector<int> silent, computing, serving;
  struct Group {
    std::vector<int> ranks;
    double longest = 0;
    uint64_t lo = UINT64_MAX, hi = 0;
  };
  std::map<std::string, Group> waiting;
  uint64_t computing_lo = UINT64_MAX, computing_hi = 0;
  for (size_t r = 0; r < by_rank.size(); ++r) {
    const int rank = static_cast<int>(r);
    if (!by_rank[r]) {
      silent.push_back(rank);
      continue;
    }
    const RankState& s = *by_rank[r];
    if (s.activity == Activity::serving) {
      serving.push_back(rank);
    } else if (s.activity == Activity::computing) {
      computing.push_back(rank);
      computing_lo = std::min(computing_lo, s.waits);
      computing_hi = std::max(computing_hi, s.waits);
    } else {
      Group& g = waiting[std::string(s.op, strnlen(s.op, sizeof s.op))];
      g.ranks.push_back(rank);
      g.longest = std::max(g.longest, s.waited_s);
      g.lo = std::min(g.lo, s.waits);
      g.hi = std::max(g.hi, s.waits);
    }
  }
  std::string text = fmt::format("no communication progress for {:g} s (--comm-timeout)", timeout_s);
  std::vector<std::string> parts;
  if (!silent.empty())
    parts.push_back(fmt::format("{} did not answer within {:g} s (stopped or hung)", rank_list(silent), grace_s));
  if (!computing.empty())
    parts.push_back(fmt::format("{} not in a wait, still computing (after {})", rank_list(computing),
                                wait_range(computing_lo, computing_hi)));
  for (const auto& [op, g] : waiting)
    parts.push_back(fmt::format("{} waiting in {} for up to {:.1f} s ({})", rank_list(g.ranks), op, g.longest,
                                wait_range(g.lo, g.hi)));
  if (!serving.empty()) parts.push_back(rank_list(serving) + " serving, waiting for requests");
  for (size_t i = 0; i < parts.size(); ++i) text += (i ? "; " : ": ") + parts[i];
  return text + "; ending the job";
}

int reporting_rank(const std::vector<std::optional<RankState>>& by_rank) {
  for (size_t r = 0; r < by_rank.size(); ++r)
    if (by_rank[r] && by_rank[r]->tripped) return static_cast<int>(r);
  return -1;
}

std::string local_stall_message(int rank, const RankState& self, double timeout_s) {
  return fmt::format(
      "no communication progress for {:g} s (--comm-timeout): rank {} waiting in {} for {:.1f} s (wait #{}); "
      "the ranks that did not answer cannot be named without MPI_THREAD_MULTIPLE; ending the job",
      timeout_s, rank, std::string(self.op, strnlen(self.op, sizeof self.op)), self.waited_s, self.waits);
}

}  // namespace mpisgd
