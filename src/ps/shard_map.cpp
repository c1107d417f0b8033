#include "ps/shard_map.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "sparse/range.h"

namespace mpisgd {
namespace {

// Features reduced to rank 0 per call: bounds the root's buffer, not only MPI's int count.
constexpr uint32_t kChunk = uint32_t{1} << 20;

// This rank's t_ri for every feature. Rows are counted in floats, exact up to 2^24 rows
// of one rank holding a feature; past that c/n only rounds, and (1 - c/n)^B is ~0 anyway
// unless B is tiny: the shards are a balance, not a contract.
std::vector<float> local_traffic(const Dataset& rows, uint64_t batch) {
  std::vector<float> t(rows.rows() ? rows.dim : 0, 0.0f);
  for (uint64_t k = 0; k < rows.nnz(); ++k) t[rows.index[k]] += 1.0f;
  const double n = static_cast<double>(rows.rows());
  const double b = std::min(static_cast<double>(batch), n);
  const double steps = std::ceil(n / static_cast<double>(batch));
  for (float& x : t)
    if (x > 0) x = static_cast<float>(steps * (1 - std::pow(1 - x / n, b)));
  return t;
}

// Rank 0 of `comm` walks the summed traffic chunk by chunk and cuts where the running
// sum passes s/S of the total, on the side of the feature nearer to the target.
class Cutter {
 public:
  Cutter(int servers, double total) : servers_(servers), total_(total), traffic_(static_cast<size_t>(servers), 0.0) {
    bounds_.push_back(0);
  }

  void take(uint32_t first, std::span<const float> t) {
    for (size_t j = 0; j < t.size(); ++j) {
      const auto i = first + static_cast<uint32_t>(j);
      while (next_target() && prefix_ + t[j] >= target()) {
        const bool after = prefix_ + t[j] - target() < target() - prefix_;
        bounds_.push_back(std::max(bounds_.back(), after ? i + 1 : i));
      }
      traffic_[shard_of(i)] += t[j];
      prefix_ += t[j];
    }
  }

  std::vector<uint32_t> bounds(uint32_t n) {
    while (static_cast<int>(bounds_.size()) < servers_ + 1) bounds_.push_back(n);
    bounds_.back() = n;
    return bounds_;
  }
  std::vector<double> traffic() const { return traffic_; }

 private:
  bool next_target() const { return static_cast<int>(bounds_.size()) < servers_; }
  double target() const { return total_ * static_cast<double>(bounds_.size()) / servers_; }
  // Shards whose cut is already placed at or below i end before it.
  size_t shard_of(uint32_t i) const {
    size_t s = bounds_.size() - 1;
    while (s > 0 && bounds_[s] > i) --s;
    return s;
  }

  int servers_;
  double total_;
  double prefix_ = 0;
  std::vector<uint32_t> bounds_;
  std::vector<double> traffic_;
};

}  // namespace

ShardMap::ShardMap(std::vector<uint32_t> bounds, std::vector<double> traffic)
    : bounds_(std::move(bounds)), traffic_(std::move(traffic)) {}

double ShardMap::share(int s) const {
  const double total = std::accumulate(traffic_.begin(), traffic_.end(), 0.0);
  return total > 0 ? traffic_[static_cast<size_t>(s)] / total : 0;
}

namespace {

template <class T, class Index>
void cut_at(std::span<const T> items, Index index, const std::vector<uint32_t>& bounds, std::vector<size_t>& cuts) {
  auto below = [&index](const T& item, uint32_t bound) { return index(item) < bound; };
  cuts.resize(bounds.size());
  cuts[0] = 0;
  for (size_t s = 1; s + 1 < bounds.size(); ++s)
    cuts[s] = static_cast<size_t>(
        std::lower_bound(items.begin() + static_cast<ptrdiff_t>(cuts[s - 1]), items.end(), bounds[s], below) -
        items.begin());
  cuts.back() = items.size();
}

}  // namespace

void ShardMap::cut(std::span<const uint32_t> indices, std::vector<size_t>& cuts) const {
  cut_at(indices, [](uint32_t i) { return i; }, bounds_, cuts);
}

void ShardMap::cut(std::span<const Pair<float>> pairs, std::vector<size_t>& cuts) const {
  cut_at(pairs, [](const Pair<float>& p) { return p.index; }, bounds_, cuts);
}

ShardMap ShardMap::balance(const Dataset& rows, uint64_t batch, int servers, MPI_Comm comm, uint32_t columns) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const uint32_t n = rows.dim;
  const std::vector<float> mine = local_traffic(rows, batch);
  double local_total = std::accumulate(mine.begin(), mine.end(), 0.0), total = 0;
  MPI_Allreduce(&local_total, &total, 1, MPI_DOUBLE, MPI_SUM, comm);

  std::vector<uint32_t> bounds(static_cast<size_t>(servers) + 1);
  std::vector<double> traffic(static_cast<size_t>(servers), 0.0);
  if (total > 0) {
    Cutter cutter(servers, total);
    std::vector<float> zeros, sum(rank == 0 ? std::min(n, kChunk) : 0);
    for (uint32_t first = 0; first < n; first += std::min(kChunk, n - first)) {
      const uint32_t len = std::min(kChunk, n - first);
      const float* part = mine.data() + first;
      if (mine.empty()) {
        zeros.assign(len, 0.0f);
        part = zeros.data();
      }
      MPI_Reduce(part, sum.data(), static_cast<int>(len), MPI_FLOAT, MPI_SUM, 0, comm);
      if (rank == 0) cutter.take(first, {sum.data(), len});
    }
    if (rank == 0) {
      bounds = cutter.bounds(n);
      traffic = cutter.traffic();
    }
  } else {
    for (int s = 0; s <= servers; ++s) bounds[static_cast<size_t>(s)] = owned_range(n, servers, std::min(s, servers - 1)).begin;
    bounds.back() = n;
  }
  for (uint32_t& b : bounds) b *= columns;
  MPI_Bcast(bounds.data(), servers + 1, MPI_UINT32_T, 0, comm);
  MPI_Bcast(traffic.data(), servers, MPI_DOUBLE, 0, comm);
  return ShardMap(std::move(bounds), std::move(traffic));
}

}  // namespace mpisgd
