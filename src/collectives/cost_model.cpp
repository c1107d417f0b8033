#include "collectives/cost_model.h"

#include "collectives/sparse_allreduce.h"
#include "comm/core_sharing.h"
#include "comm/node_facts.h"
#include "comm/shared_slots.h"

#include <algorithm>
#include <cmath>

#include <spdlog/spdlog.h>

namespace mpisgd {
namespace {

int ceil_log2(int p) {
  int l = 0;
  while ((1 << l) < p) ++l;
  return l;
}

}  // namespace

double expected_union(double k, double universe, double m) {
  if (universe <= 0 || k <= 0) return 0;
  if (k >= universe) return universe;
  return universe * -std::expm1(m * std::log1p(-k / universe));
}

double fit_universe(double k, double result, int ranks, double dim) {
  if (k <= 0) return dim;
  if (result <= k) return k;
  double lo = k, hi = std::max(dim, k) * 1e6;  // result near P k: disjoint sets, M huge
  if (expected_union(k, hi, ranks) <= result) return hi;
  for (int i = 0; i < 100 && hi / lo > 1.0001; ++i) {
    const double mid = std::sqrt(lo * hi);
    (expected_union(k, mid, ranks) < result ? lo : hi) = mid;
  }
  return std::sqrt(lo * hi);
}

CostModel::CostModel(const CostInputs& in) : in_(in), n_(static_cast<double>(in.dim)) {}

bool CostModel::goes_dense(double items, double length, double switch_density) const {
  const auto value = static_cast<double>(in_.value_bytes);
  return std::min(items, length) > std::min(length * value / (sizeof(uint32_t) + value), switch_density * length);
}

double CostModel::transfer(double items, double length, double switch_density) const {
  const auto value = static_cast<double>(in_.value_bytes);
  const double item = wire_item_bytes(in_.value_bytes, in_.run_columns);
  const bool dense = goes_dense(items, length, switch_density);
  return in_.network.beta * (Stream<float>::kHeaderBytes + (dense ? length * value : items * item));
}

double CostModel::transfer(double items, double length) const {
  return transfer(items, length, in_.dense_switch.density);
}

double CostModel::message(double items, double length) const { return in_.network.alpha + transfer(items, length); }

double CostModel::gather_message(double items, double length) const {
  return in_.network.alpha + gather_transfer(items, length);
}

double CostModel::gather_transfer(double items, double length) const {
  return transfer(items, length, kByteBound.density);
}

double CostModel::compact(double items, double length) const {
  return goes_dense(items, length, in_.dense_switch.density) ? length * in_.compute.dense_element_s : 0;
}

double CostModel::sum(double items, double length) const {
  return goes_dense(items, length, in_.dense_switch.density) ? length * in_.compute.dense_element_s
                                                             : 2 * items * in_.compute.merge_item_s;
}

double CostModel::share(int senders) const { return in_.mean_volume ? senders / p() : 1.0; }

double CostModel::sum_of(double m) const { return std::min(expected_union(in_.k, in_.universe, m), n_); }

double CostModel::dense(double values) const {
  return in_.network.beta * values * static_cast<double>(in_.value_bytes);
}

double CostModel::split(int parts) const {
  if (parts < 2) return 0;
  const double length = n_ / parts;
  // The parts are posted at once: one alpha, a gap for each further message, and every
  // message's bytes through the rank's link.
  const double t = in_.network.alpha + (parts - 2) * in_.network.gap + (parts - 1) * transfer(in_.k / parts, length);
  return t + tree_sums(parts);
}

double CostModel::tree_sums(int parts) const {
  // At the level where partial sums hold m parts, about parts / 2m sums, each of a
  // partial of sum_of(m) / parts items.
  const double length = n_ / parts;
  double t = 0;
  for (int m = 1; m < parts; m *= 2) t += std::ceil(parts / (2.0 * m)) * sum(sum_of(m) / parts, length);
  return t;
}

double CostModel::barrier() const { return ceil_log2(in_.ranks) * in_.network.alpha; }

double CostModel::dense_allgather() const {
  return ceil_log2(in_.ranks) * in_.network.alpha + dense((p() - 1) / p() * n_);
}

double CostModel::dense_reduce_scatter(double values, int parts) const {
  if (parts <= 1) return 0;
  const double share = (parts - 1.0) / parts * values;
  return ceil_log2(parts) * in_.network.alpha + dense(share) + share * in_.compute.dense_element_s;
}

// A packed run's head: its first index and its length (sparse/packed_stream.h).
constexpr double kRunHeadBytes = 2 * sizeof(uint32_t);

double wire_item_bytes(size_t value_bytes, uint32_t run_columns) {
  const auto value = static_cast<double>(value_bytes);
  const double pair = sizeof(uint32_t) + value;
  return run_columns > 1 ? std::min(pair, value + kRunHeadBytes / run_columns) : pair;
}

DenseSwitch network_dense_switch(const AlphaBeta& network, const SummationSpeed& compute, size_t value_bytes,
                                 uint32_t run_columns) {
  const auto value = static_cast<double>(value_bytes);
  const double dense = value * network.beta + compute.dense_element_s;
  const double sparse = wire_item_bytes(value_bytes, run_columns) * network.beta + 2 * compute.merge_item_s;
  return DenseSwitch{sparse > 0 ? std::min(1.0, dense / sparse) : DenseSwitch::kMeasuredDensity};
}

MachineSpeed measure_machine_speed(const CountedComm& counted) {
  const MPI_Comm comm = counted.raw();
  const AlphaBeta network = measure_alpha_beta(comm);
  // One rank a node measures while the node's others wait: the model wants one core's
  // speed undisturbed (comm/core_sharing.h), and ranks that share cores, all measuring
  // at once, slowed each other's measurement down (four ranks on the 2-core VM: 60-80 ms
  // of their start-up against 25-30 ms for two). The others' zeros leave the maximum.
  const SummationSpeed local = rank_on_node(comm) == 0 ? measure_summation_speed() : SummationSpeed{};
  double speeds[2] = {local.merge_item_s, local.dense_element_s};
  MPI_Allreduce(MPI_IN_PLACE, speeds, 2, MPI_DOUBLE, MPI_MAX, comm);
  return {network, {speeds[0], speeds[1]}, core_sharing(comm), shared_window_room(comm)};
}

bool pack_runs_pay(const AlphaBeta& network, const SummationSpeed& compute, uint32_t columns) {
  if (columns < 2) return false;
  const double saved_bytes = sizeof(uint32_t) - kRunHeadBytes / columns;
  return saved_bytes * network.beta > 0.5 * compute.merge_item_s;
}

CollectiveConfig tuned(CollectiveConfig config, CountedComm& comm, size_t value_bytes) {
  const bool ask_packing = config.columns > 1 && !config.pack_runs && comm.size() > 1;
  if (!config.tune_dense_switch && !ask_packing) return config;
  if (!config.measured) config.measured = measure_machine_speed(comm);
  if (ask_packing) {
    config.pack_runs = pack_runs_pay(config.measured->network, config.measured->compute, config.columns);
    spdlog::info("{} weights a feature: updates cross {} (network {:.2f} ns a byte, merge {:.2f} ns an item)",
                 config.columns, *config.pack_runs ? "packed into runs of consecutive indices" : "as pairs",
                 config.measured->network.beta * 1e9, config.measured->compute.merge_item_s * 1e9);
  }
  // After packing is settled: packed, a sparse stream's bytes cost less.
  if (config.tune_dense_switch) {
    config.dense_switch = network_dense_switch(config.measured->network, config.measured->compute, value_bytes,
                                               config.packs() ? config.columns : 1);
    config.tune_dense_switch = false;
  }
  return config;
}

}  // namespace mpisgd
