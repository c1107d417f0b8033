#include "cli/nearest_name.h"

#include <algorithm>

namespace mpisgd::cli {
namespace {

// Optimal string alignment distance: Levenshtein plus adjacent swaps, the commonest typo
// ("trian" for "train") that plain Levenshtein counts as two edits.
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t substitute = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + substitute});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

}  // namespace

std::string nearest_name(const std::string& typed, const std::vector<std::string>& candidates) {
  std::string nearest;
  size_t best = (typed.size() + 1) / 3 + 1;
  for (const auto& candidate : candidates) {
    const size_t distance = edit_distance(typed, candidate);
    if (distance < best) {
      best = distance;
      nearest = candidate;
    }
  }
  return nearest;
}

std::string did_you_mean(const std::string& typed, const std::vector<std::string>& candidates,
                         const std::string& open, const std::string& close) {
  const std::string nearest = nearest_name(typed, candidates);
  return nearest.empty() ? "" : " (did you mean " + open + nearest + close + "?)";
}

}  // namespace mpisgd::cli
