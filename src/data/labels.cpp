#include "data/labels.h"

#include <algorithm>
#include <spdlog/spdlog.h>

#include "comm/job_error.h"

namespace mpisgd {
namespace {

// Fixed-size record so one MPI_Allgather carries every rank's labels.
struct LabelSlots {
  float label[3];
  uint64_t line[3];
  int count;
};

std::string join(const std::vector<float>& v) {
  std::string s;
  for (float x : v) s += (s.empty() ? "" : ", ") + fmt::format("{}", x);
  return s;
}

}  // namespace

std::vector<LabelSeen> first_distinct_labels(const Dataset& d) {
  std::vector<LabelSeen> seen;
  for (float label : d.label) {
    if (std::none_of(seen.begin(), seen.end(), [&](const LabelSeen& s) { return s.label == label; }))
      seen.push_back({label, 0});
    if (seen.size() == 3) break;
  }
  return seen;
}

LabelMap agree_on_labels(const std::string& path, const std::vector<LabelSeen>& local, MPI_Comm comm) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  LabelSlots mine{};
  mine.count = static_cast<int>(std::min<size_t>(local.size(), 3));
  for (int i = 0; i < mine.count; ++i) {
    mine.label[i] = local[i].label;
    mine.line[i] = local[i].line;
  }
  std::vector<LabelSlots> all(static_cast<size_t>(size));
  MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, comm);

  // Rank order is file order, so the stable sort by line keeps it where lines are unknown.
  std::vector<LabelSeen> seen;
  for (const auto& slots : all)
    for (int i = 0; i < slots.count; ++i) seen.push_back({slots.label[i], slots.line[i]});
  std::stable_sort(seen.begin(), seen.end(), [](const LabelSeen& a, const LabelSeen& b) { return a.line < b.line; });
  std::vector<float> distinct;
  for (const auto& s : seen) {
    if (std::find(distinct.begin(), distinct.end(), s.label) != distinct.end()) continue;
    if (distinct.size() == 2)
      throw JobFailed(InputError(path, s.line,
                                 fmt::format("third distinct label {} after {}: logreg and svm need two classes "
                                             "(use --model linreg for real-valued targets)",
                                             s.label, join(distinct)))
                          .what());
    distinct.push_back(s.label);
  }
  LabelMap map;
  if (distinct.size() == 1) {
    spdlog::warn("{}: every row has label {}; the model will learn one class", path, distinct[0]);
    (distinct[0] > 0 ? map.positive : map.negative) = distinct[0];
  } else if (distinct.size() == 2) {
    map.positive = std::max(distinct[0], distinct[1]);
    map.negative = std::min(distinct[0], distinct[1]);
  }
  return map;
}

void to_signs(Dataset& d, const LabelMap& map) {
  for (float& y : d.label) y = map.sign(y);
}

}  // namespace mpisgd
