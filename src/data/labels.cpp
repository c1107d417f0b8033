#include "data/labels.h"

#include <algorithm>
#include <map>
#include <spdlog/spdlog.h>

#include "comm/job_error.h"

namespace mpisgd {
namespace {

// A label and a count (its first line, or its rows), as one MPI_Allgatherv carries them.
struct LabelRecord {
  float label;
  uint64_t count;
};

// Every rank's records in rank order, which is file order.
std::vector<LabelRecord> gather(const std::vector<LabelRecord>& mine, MPI_Comm comm) {
  int size = 1;
  MPI_Comm_size(comm, &size);
  const int bytes = static_cast<int>(mine.size() * sizeof(LabelRecord));
  std::vector<int> counts(static_cast<size_t>(size)), offsets(static_cast<size_t>(size), 0);
  MPI_Allgather(&bytes, 1, MPI_INT, counts.data(), 1, MPI_INT, comm);
  for (size_t r = 1; r < counts.size(); ++r) offsets[r] = offsets[r - 1] + counts[r - 1];
  std::vector<LabelRecord> all(static_cast<size_t>(offsets.back() + counts.back()) / sizeof(LabelRecord));
  MPI_Allgatherv(mine.data(), bytes, MPI_BYTE, all.data(), counts.data(), offsets.data(), MPI_BYTE, comm);
  return all;
}

std::string join(const std::vector<float>& v) {
  std::string s;
  for (float x : v) s += (s.empty() ? "" : " ") + fmt::format("{}", x);
  return s;
}

}  // namespace

int64_t LabelMap::column_of(float label) const {
  if (classes.empty()) return label == positive ? 0 : label == negative ? 1 : -1;
  const auto it = std::find(classes.begin(), classes.end(), label);
  return it == classes.end() ? -1 : it - classes.begin();
}

std::vector<LabelSeen> first_distinct_labels(const Dataset& d) {
  std::vector<LabelSeen> seen;
  for (float label : d.label) {
    if (std::none_of(seen.begin(), seen.end(), [&](const LabelSeen& s) { return s.label == label; }))
      seen.push_back({label, 0});
    if (seen.size() > kMostClasses) break;
  }
  return seen;
}

LabelMap agree_on_labels(const std::string& path, const std::vector<LabelSeen>& local, MPI_Comm comm) {
  std::vector<LabelRecord> mine;
  for (const auto& s : local) mine.push_back({s.label, s.line});
  std::vector<LabelRecord> seen = gather(mine, comm);

  // The stable sort by line keeps rank order where lines are unknown.
  std::stable_sort(seen.begin(), seen.end(), [](const LabelRecord& a, const LabelRecord& b) { return a.count < b.count; });
  std::vector<float> distinct;
  for (const auto& s : seen) {
    if (std::find(distinct.begin(), distinct.end(), s.label) != distinct.end()) continue;
    if (distinct.size() == kMostClasses)
      throw JobFailed(InputError(path, s.count,
                                 fmt::format("label {} makes {} distinct labels: logreg and svm take at most {} "
                                             "classes (use --model linreg for real-valued targets)",
                                             s.label, kMostClasses + 1, kMostClasses))
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
  } else if (distinct.size() > 2) {
    map.classes = std::move(distinct);
  }
  return map;
}

std::vector<uint64_t> to_training_labels(Dataset& d, const LabelMap& map) {
  std::vector<uint64_t> rows(map.classes.empty() ? 2 : map.classes.size(), 0);
  if (map.classes.empty()) {
    for (float& y : d.label) {
      y = map.sign(y);
      ++rows[y > 0 ? 0 : 1];
    }
    return rows;
  }
  std::map<float, uint32_t> column;
  for (uint32_t c = 0; c < map.classes.size(); ++c) column[map.classes[c]] = c;
  for (float& y : d.label) {
    const uint32_t c = column.at(y);
    y = static_cast<float>(c);
    ++rows[c];
  }
  return rows;
}

void log_classes(const std::string& path, const LabelMap& map, const std::vector<uint64_t>& rows, MPI_Comm comm) {
  std::vector<uint64_t> total(rows.size());
  MPI_Reduce(rows.data(), total.data(), static_cast<int>(rows.size()), MPI_UINT64_T, MPI_SUM, 0, comm);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank != 0 || map.classes.empty()) return;
  std::string list;
  for (size_t c = 0; c < total.size(); ++c)
    list += fmt::format("{}{} ({} rows)", c ? ", " : "", map.classes[c], total[c]);
  spdlog::info("{}: {} classes, in the model's order: {}", path, map.classes.size(), list);
}

void warn_unseen_labels(const std::string& path, const Dataset& test, const LabelMap& map, MPI_Comm comm) {
  std::map<float, uint64_t> unseen;
  for (float y : test.label)
    if (map.column_of(y) < 0) ++unseen[y];
  std::vector<LabelRecord> mine;
  for (auto [label, rows] : unseen) mine.push_back({label, rows});
  std::map<float, uint64_t> all;
  for (const auto& r : gather(mine, comm)) all[r.label] += r.count;
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  if (rank != 0 || all.empty()) return;
  std::vector<float> labels;
  uint64_t rows = 0;
  for (auto [label, n] : all) {
    labels.push_back(label);
    rows += n;
  }
  spdlog::warn("{}: {} rows have label{} the training rows lack ({}); they count as errors", path, rows,
               labels.size() == 1 ? "" : "s", join(labels));
}

}  // namespace mpisgd
