#pragma once
// The q-quantile of measurements (benchmark times, counts), linear between order
// statistics; NaN for no measurements, so that an empty row reads as missing, not 0.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace mpisgd {

template <class T>
double quantile(std::vector<T> v, double q) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(v.begin(), v.end());
  const double at = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<size_t>(std::floor(at));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return static_cast<double>(v[lo]) + (at - static_cast<double>(lo)) * (static_cast<double>(v[hi]) - static_cast<double>(v[lo]));
}

}  // namespace mpisgd
