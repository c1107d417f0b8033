// Every sparse allreduce in the registry, float and double, against MPI_Allreduce of the
// dense vectors. Values are small integers, so every sum is exact whatever the order of
// the additions and the results must be equal bit for bit. Inputs: random index sets from
// empty to full, identical sets (a pure allreduce), disjoint sets (a pure allgather),
// power-law sets, mixed sparse and dense inputs; N from 0 and below P to not divisible by
// P. Each algorithm object is called many times in a row, as a trainer calls it. Also: a
// configured or tuned dense switch, dsar-early's group sizes, and the bytes counted.
// Every assertion is on a value all ranks agree on (on_all_ranks), so a failure on one
// rank fails the test everywhere instead of hanging the others.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "collectives/collective_util.h"
#include "collectives/sparse_allreduce.h"
#include "contributions.h"
#include "mpi_test_util.h"
#include "sparse/sample.h"
#include "sparse/stream_sum.h"

using namespace mpisgd;
using namespace mpisgd::test;

namespace {

const std::vector<Pattern>& all_patterns() {
  static const std::vector<Pattern> patterns = {
      {Kind::kRandom, 0},       {Kind::kRandom, 1e-4},   {Kind::kRandom, 1e-2},   {Kind::kRandom, 0.3},
      {Kind::kRandom, 1.0},     {Kind::kIdentical, 1e-2}, {Kind::kIdentical, 0.3}, {Kind::kDisjoint, 1e-2},
      {Kind::kDisjoint, 1.0},   {Kind::kPowerLaw, 0.05}, {Kind::kMixed, 1e-2},
  };
  return patterns;
}

// Non-zero integers in [-4, 4]: sums of up to 13 ranks are exact in float.
template <class V>
Contribution<V> contribution(const Pattern& pattern, uint32_t n, int rank, int size, uint64_t seed) {
  return test::contribution<V>(pattern, n, rank, size, seed, 4);
}

// The input as a trainer encodes it, with the collective's switch; `dense` forces the
// dense form.
template <class V>
Stream<V> encode_input(const Contribution<V>& c, uint32_t n, bool dense, const DenseSwitch& sw = {}) {
  Stream<V> s(n);
  encode<V>(c.index, c.value, {0, n}, dense ? DenseSwitch{0} : sw, s);
  return s;
}

// MPI_Allreduce of the dense vectors: the reference.
template <class V>
std::vector<V> reference_sum(const Contribution<V>& c, uint32_t n) {
  std::vector<V> d(n, V{0});
  for (size_t j = 0; j < c.index.size(); ++j) d[c.index[j]] = c.value[j];
  if (n > 0) MPI_Allreduce(MPI_IN_PLACE, d.data(), static_cast<int>(n), mpi_type<V>(), MPI_SUM, MPI_COMM_WORLD);
  return d;
}

// True if `s` is a well-formed stream over [0, n) whose dense form is `expect`.
template <class V>
bool equals(const Stream<V>& s, uint32_t n, const std::vector<V>& expect) {
  if (s.is_dense()) {
    if (s.count() != n) return false;
  } else {
    if (s.count() > n) return false;
    const auto pairs = s.pairs();
    for (size_t j = 0; j < pairs.size(); ++j) {
      const uint32_t i = pairs[j].index;
      if (i >= n || (j > 0 && i <= pairs[j - 1].index)) return false;
    }
  }
  std::vector<V> got(n, V{77});
  write_dense(s, {0, n}, got.data());
  return got == expect;
}

// `config` with the machine's speed, measured once per run (a collective, first reached
// by all ranks in the same test): auto would measure it again for every object, at a
// fraction of a second per rank, seconds when 13 ranks share 2 cores.
CollectiveConfig measured(CollectiveConfig config = {}) {
  static const MachineSpeed speed = measure_machine_speed(CountedComm(MPI_COMM_WORLD));
  config.measured = speed;
  return config;
}

// auto with every algorithm in a near tie, timed twice each, adding a value in 0.4 ns and
// moving a byte in `beta` seconds.
CollectiveConfig all_tied(double beta) {
  CollectiveConfig config = measured();
  config.tie_factor = 1e300;
  config.tie_trials = 2;
  config.tie_seconds = 0;
  config.measured->compute.dense_element_s = 4e-10;
  config.measured->network.beta = beta;
  return config;
}

// Every algorithm of the registry, in its order.
template <class V>
std::vector<std::unique_ptr<SparseAllreduce<V>>> make_all(CountedComm& comm, uint32_t n,
                                                            const CollectiveConfig& config) {
  std::vector<std::unique_ptr<SparseAllreduce<V>>> all;
  for (const auto& info : sparse_allreduce_registry<V>()) all.push_back(info.make(comm, n, measured(config)));
  return all;
}

// Sizes: empty, below P, P - 1, not divisible by most P, and large enough to go sparse.
std::vector<uint32_t> sizes() {
  const auto p = static_cast<uint32_t>(world_size());
  std::vector<uint32_t> n = {0, 1, 2, 7, 1000, 100003};
  if (p > 1 && std::find(n.begin(), n.end(), p - 1) == n.end()) n.insert(n.begin() + 2, p - 1);
  return n;
}

}  // namespace

TEMPLATE_TEST_CASE("every allreduce equals MPI_Allreduce exactly, call after call", "[collectives]", float,
                   double) {
  using V = TestType;
  const int rank = world_rank(), size = world_size();
  CountedComm comm(MPI_COMM_WORLD);
  const auto& registry = sparse_allreduce_registry<V>();
  REQUIRE(registry.size() >= 6);
  uint64_t seed = 1;
  for (uint32_t n : sizes()) {
    // One object per algorithm and size, reused for every pattern: buffers are swapped
    // inside, so later calls run on buffers earlier calls left behind.
    auto algorithms = make_all<V>(comm, n, {});
    for (const Pattern& pattern : all_patterns()) {
      // At the largest N, one dense pattern (random 0.3) stands for the others, which
      // only repeat what smaller N show at a cost that dominates the suite when 13 ranks
      // share 2 cores.
      if (n > 10000 && pattern.density >= 0.3 && !(pattern.kind == Kind::kRandom && pattern.density == 0.3)) continue;
      const Contribution<V> mine = contribution<V>(pattern, n, rank, size, seed++);
      const bool dense_input = pattern.kind == Kind::kMixed && rank % 2 == 1;
      const Stream<V> input = encode_input(mine, n, dense_input);
      const std::vector<V> expect = reference_sum(mine, n);
      for (size_t a = 0; a < algorithms.size(); ++a) {
        const std::string& name = registry[a].name;
        INFO("algorithm " << name << ", N " << n << ", " << pattern.name() << ", P " << size);
        const Stream<V>& result = algorithms[a]->allreduce(input);
        CHECK(on_all_ranks(equals(result, n, expect)));
        // A very sparse sum stays sparse in the sparse algorithms; dense ones are dense.
        if (n == 100003 && pattern.kind == Kind::kRandom && pattern.density == 1e-4) {
          const bool sparse_algorithm = name.rfind("ssar", 0) == 0;
          const bool dense_algorithm = name.rfind("dense", 0) == 0 || name.rfind("dsar", 0) == 0;
          if (sparse_algorithm) CHECK(on_all_ranks(!result.is_dense()));
          if (dense_algorithm) CHECK(on_all_ranks(result.is_dense()));
        }
      }
    }
  }
}

// Values whose sums round, so the order of the additions shows in the bits: each rank
// builds every rank's input from its seed and sums them in canonical_sum_order(), and
// every algorithm that claims that order (auto among them) must return those bits.
TEMPLATE_TEST_CASE("the canonical-order algorithms give the same bits on sums that round", "[collectives]", float,
                   double) {
  using V = TestType;
  const int rank = world_rank(), size = world_size();
  CountedComm comm(MPI_COMM_WORLD);
  const auto& registry = sparse_allreduce_registry<V>();
  REQUIRE(std::count_if(registry.begin(), registry.end(), [](const auto& i) { return i.canonical_order; }) >= 5);
  auto inputs = [&](uint32_t n, double density, uint64_t seed) {
    std::vector<Contribution<V>> all(static_cast<size_t>(size));
    for (int r = 0; r < size; ++r) {
      std::mt19937_64 own(seed * 7919 + static_cast<uint64_t>(r));
      all[static_cast<size_t>(r)].index = distinct_indices(n, items(density, n), own);
      // Magnitudes over six decades: most additions round.
      std::uniform_real_distribution<double> mantissa(-1, 1), decade(-3, 3);
      for (size_t j = 0; j < all[static_cast<size_t>(r)].index.size(); ++j) {
        V v = static_cast<V>(mantissa(own) * std::pow(10.0, decade(own)));
        all[static_cast<size_t>(r)].value.push_back(v == V{0} ? V{1} : v);
      }
    }
    return all;
  };
  uint64_t seed = 2000;
  for (uint32_t n : {1000u, 100003u}) {
    auto algorithms = make_all<V>(comm, n, {});
    for (double density : {1e-3, 0.05, 0.5, 1.0}) {
      const auto all = inputs(n, density, seed++);
      std::vector<std::vector<V>> parts(static_cast<size_t>(size), std::vector<V>(n, V{0}));
      for (int r = 0; r < size; ++r) {
        const auto& c = all[static_cast<size_t>(r)];
        for (size_t j = 0; j < c.index.size(); ++j) parts[static_cast<size_t>(r)][c.index[j]] = c.value[j];
      }
      for (auto [into, from] : canonical_sum_order(size)) {
        for (uint32_t i = 0; i < n; ++i) parts[static_cast<size_t>(into)][i] += parts[static_cast<size_t>(from)][i];
      }
      const Stream<V> input = encode_input(all[static_cast<size_t>(rank)], n, false);
      for (size_t a = 0; a < algorithms.size(); ++a) {
        if (!registry[a].canonical_order) continue;
        INFO("algorithm " << registry[a].name << ", N " << n << ", density " << density << ", P " << size);
        CHECK(on_all_ranks(equals(algorithms[a]->allreduce(input), n, parts[0])));
      }
    }
  }
}

TEMPLATE_TEST_CASE("a configured dense switch is honoured and keeps results exact", "[collectives]", float,
                   double) {
  using V = TestType;
  const int rank = world_rank(), size = world_size();
  CountedComm comm(MPI_COMM_WORLD);
  const auto& registry = sparse_allreduce_registry<V>();
  const std::vector<Pattern> patterns = {{Kind::kRandom, 0},        {Kind::kRandom, 1e-2},
                                         {Kind::kRandom, 0.3},      {Kind::kIdentical, 0.1},
                                         {Kind::kDisjoint, 0.2},    {Kind::kPowerLaw, 0.1},
                                         {Kind::kMixed, 1e-2}};
  uint64_t seed = 1000;
  for (double density : {0.0, 1e-3, 0.2, 1.0}) {
    CollectiveConfig config;
    config.dense_switch.density = density;
    for (uint32_t n : {7u, 1000u}) {
      auto algorithms = make_all<V>(comm, n, config);
      for (const Pattern& pattern : patterns) {
        const Contribution<V> mine = contribution<V>(pattern, n, rank, size, seed++);
        const Stream<V> input =
            encode_input(mine, n, pattern.kind == Kind::kMixed && rank % 2 == 1, config.dense_switch);
        const std::vector<V> expect = reference_sum(mine, n);
        uint64_t total = mine.index.size();
        MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
        for (size_t a = 0; a < algorithms.size(); ++a) {
          INFO("algorithm " << registry[a].name << ", switch density " << density << ", N " << n << ", "
                            << pattern.name() << ", P " << size);
          const Stream<V>& result = algorithms[a]->allreduce(input);
          CHECK(on_all_ranks(equals(result, n, expect)));
          // A density of 0 sends every non-empty stream dense (inputs included, encoded
          // with the same switch), so any item makes a sum dense. ssar-split-ag and ssar-shm
          // (and auto when it runs one) gather their sums compacted, as pairs up to the byte
          // bound.
          const std::string& name = registry[a].name;
          const bool gathers_pairs = name == "ssar-split-ag" || name == "ssar-shm" || name == "auto";
          if (density == 0 && total > 0 && !gathers_pairs) CHECK(on_all_ranks(result.is_dense()));
          // With the byte bound alone, 100 shared indices of 1000 stay sparse in the sparse
          // algorithms (the default switch, a few percent, would make them dense).
          const bool sparse_algorithm = registry[a].name.rfind("ssar", 0) == 0;
          if (density == 1.0 && n == 1000 && pattern.kind == Kind::kIdentical && sparse_algorithm) {
            CHECK(on_all_ranks(!result.is_dense() && result.count() == 100));
          }
          // A sparse result is never larger on the wire than the dense one.
          CHECK(on_all_ranks(result.bytes() <= Stream<V>::dense_bytes(n)));
        }
      }
    }
  }
}

TEMPLATE_TEST_CASE("a tuned dense switch is agreed by all ranks and keeps results exact", "[collectives]", float,
                   double) {
  // The trainer's default: make_sparse_allreduce replaces the switch by the one the
  // measured network and summation speed call for.
  using V = TestType;
  const int rank = world_rank(), size = world_size();
  CountedComm comm(MPI_COMM_WORLD);
  CollectiveConfig config = measured();
  config.tune_dense_switch = true;
  const CollectiveConfig t = tuned(config, comm, sizeof(V));
  double density = t.dense_switch.density, on_rank0 = density;
  MPI_Bcast(&on_rank0, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  CAPTURE(density, on_rank0);
  CHECK(on_all_ranks(!t.tune_dense_switch && density > 0 && density <= 1 && density == on_rank0));

  uint64_t seed = 1500;
  for (uint32_t n : {7u, 1000u}) {
    for (const auto& info : sparse_allreduce_registry<V>()) {
      auto ar = make_sparse_allreduce<V>(info.name, comm, n, config);
      for (Pattern pattern : {Pattern{Kind::kRandom, 1e-2}, Pattern{Kind::kRandom, 0.3},
                              Pattern{Kind::kIdentical, 0.05}, Pattern{Kind::kPowerLaw, 0.1}}) {
        INFO("algorithm " << info.name << ", tuned switch " << density << ", N " << n << ", " << pattern.name()
                          << ", P " << size);
        const Contribution<V> mine = contribution<V>(pattern, n, rank, size, seed++);
        CHECK(on_all_ranks(equals(ar->allreduce(encode_input(mine, n, false, t.dense_switch)), n,
                                  reference_sum(mine, n))));
      }
    }
  }
}

TEST_CASE("dsar-early: group sizes that do and do not divide P", "[collectives]") {
  // The group actually used: the largest divisor of P not above the request.
  CHECK(early_dsar_group(1, 8) == 1);
  CHECK(early_dsar_group(8, 8) == 8);
  CHECK(early_dsar_group(12, 8) == 6);
  CHECK(early_dsar_group(9, 8) == 3);
  CHECK(early_dsar_group(13, 8) == 1);
  CHECK(early_dsar_group(6, 100) == 6);
  CHECK(early_dsar_group(4, 3) == 2);
  CHECK(early_dsar_group(4, 0) == 1);

  const int rank = world_rank(), size = world_size();
  CountedComm comm(MPI_COMM_WORLD);
  uint64_t seed = 2000;
  for (int group : {1, 2, 3, 8, size + 3}) {
    for (uint32_t n : {1u, 7u, 1003u}) {
      for (double density : {0.0, 1.0}) {
        CollectiveConfig config;
        config.dense_switch.density = density;
        config.group_size = group;
        auto float_ar = make_sparse_allreduce<float>("dsar-early", comm, n, config);
        auto double_ar = make_sparse_allreduce<double>("dsar-early", comm, n, config);
        for (Pattern pattern : {Pattern{Kind::kRandom, 1e-2}, Pattern{Kind::kRandom, 0.5},
                                Pattern{Kind::kIdentical, 0.05}, Pattern{Kind::kPowerLaw, 0.1}}) {
          INFO("group " << group << ", N " << n << ", switch density " << density << ", " << pattern.name() << ", P "
                        << size);
          const auto f = contribution<float>(pattern, n, rank, size, seed);
          const auto d = contribution<double>(pattern, n, rank, size, seed++);
          CHECK(on_all_ranks(equals(float_ar->allreduce(encode_input(f, n, false)), n, reference_sum(f, n))));
          CHECK(on_all_ranks(equals(double_ar->allreduce(encode_input(d, n, false)), n, reference_sum(d, n))));
        }
      }
    }
  }
}

TEMPLATE_TEST_CASE("byte counters: what the algorithms send and receive", "[collectives]", float, double) {
  using V = TestType;
  const int rank = world_rank(), size = world_size();
  CountedComm comm(MPI_COMM_WORLD);
  const uint32_t n = 100003;
  // The same 50 indices on every rank: every partial sum has 50 pairs and stays sparse.
  const Contribution<V> mine = contribution<V>({Kind::kIdentical, 50.0 / n}, n, rank, size, 3000);
  REQUIRE(mine.index.size() == 50);
  const Stream<V> input = encode_input(mine, n, false);
  REQUIRE_FALSE(input.is_dense());
  const uint64_t stream = 8 + 50 * (4 + sizeof(V));  // header + k (index, value) pairs
  // The stream of this rank's pairs in `range`, as the split algorithms send it.
  auto part_bytes = [&](Range range, const DenseSwitch& sw) {
    uint64_t k = 0;
    for (uint32_t i : mine.index) k += i >= range.begin && i < range.end;
    return k > sw.switch_count<V>(range.length()) ? Stream<V>::dense_bytes(range.length()) : Stream<V>::sparse_bytes(k);
  };
  // What this rank sent and received while `ar` reduced `input`.
  auto moved_by = [&](SparseAllreduce<V>& ar) {
    const CommStats before = comm.stats();
    ar.allreduce(input);
    return comm.stats() - before;
  };

  SECTION("ssar-rec-dbl: one stream per stage, and one each way for a folded rank") {
    auto ar = make_sparse_allreduce<V>("ssar-rec-dbl", comm, n, {});
    const Fold fold(rank, size);
    const auto stages = static_cast<uint64_t>(floor_log2(size));
    uint64_t sent = stages * stream, received = stages * stream;
    if (rank < 2 * fold.rem) {
      if (fold.folded_out()) {
        sent = received = stream;  // hands its input in, gets the result back
      } else {
        sent += stream;  // the result back to the folded rank
        received += stream;
      }
    }
    for (int call = 0; call < 3; ++call) {
      const CommStats before = comm.stats();
      const Stream<V>& result = ar->allreduce(input);
      const CommStats moved = comm.stats() - before;
      CAPTURE(call, rank, size, moved.bytes_sent, moved.bytes_received, sent, received);
      CHECK(on_all_ranks(moved.bytes_sent == sent && moved.bytes_received == received));
      CHECK(on_all_ranks(!result.is_dense() && result.count() == 50 && result.bytes() == stream));
    }
  }
  SECTION("ssar-shm: the parts and sums other ranks read from this rank's slot, and it from theirs") {
    auto ar = make_sparse_allreduce<V>("ssar-shm", comm, n, measured());
    // Every rank holds the same indices, so each owned sum has as many pairs as each part.
    auto pairs_in = [&](int r) {
      const Range range = owned_range(n, size, r);
      return static_cast<uint64_t>(std::count_if(mine.index.begin(), mine.index.end(),
                                                 [&](uint32_t i) { return i >= range.begin && i < range.end; }));
    };
    uint64_t others = 0;
    for (int r = 0; r < size; ++r) others += r == rank ? 0 : Stream<V>::sparse_bytes(pairs_in(r));
    // Its part of each other rank's input and their sums; its parts of the others' ranges
    // and its sum, once for each of them.
    const uint64_t bytes = others + static_cast<uint64_t>(size - 1) * Stream<V>::sparse_bytes(pairs_in(rank));
    for (int call = 0; call < 2; ++call) {
      const CommStats moved = moved_by(*ar);
      CAPTURE(call, rank, size, moved.bytes_sent, moved.bytes_received, bytes);
      CHECK(on_all_ranks(moved.bytes_sent == bytes && moved.bytes_received == bytes));
    }
  }
  SECTION("dense: the volume of a bandwidth-optimal allreduce") {
    auto ar = make_sparse_allreduce<V>("dense", comm, n, {});
    const uint64_t volume = 2 * static_cast<uint64_t>(size - 1) * n * sizeof(V) / static_cast<uint64_t>(size);
    const CommStats moved = moved_by(*ar);
    CAPTURE(rank, size, moved.bytes_sent, moved.bytes_received, volume);
    CHECK(on_all_ranks(moved.bytes_sent == volume && moved.bytes_received == volume));
  }
  SECTION("dense-rec-halving: halves out and in, a dense stream each way for a folded rank") {
    auto ar = make_sparse_allreduce<V>("dense-rec-halving", comm, n, {});
    const Fold fold(rank, size);
    // Stage t keeps half of the range held before it and sends the other half; the
    // allgather sends what was kept and receives what was sent.
    uint64_t values = 0;
    if (!fold.folded_out()) {
      uint32_t held = n;
      for (int mask = 1; mask < fold.p2; mask <<= 1) {
        const uint32_t lower = held / 2, upper = held - lower;
        const uint32_t kept = fold.new_rank & mask ? upper : lower;
        values += held;  // (held - kept) in the reduce-scatter, kept in the allgather
        held = kept;
      }
    }
    // The fold: the whole vector one way each, as a dense stream (values and header).
    const uint64_t bytes = values * sizeof(V) + (rank < 2 * fold.rem ? Stream<V>::dense_bytes(n) : 0);
    const CommStats moved = moved_by(*ar);
    CAPTURE(rank, size, moved.bytes_sent, moved.bytes_received, bytes);
    CHECK(on_all_ranks(moved.bytes_sent == bytes && moved.bytes_received == bytes));
  }
  SECTION("ssar-split-ag: the allgather sends pairs, whatever the summation switch") {
    // Positive values, so that no sum cancels to a zero that compacting would drop.
    Contribution<V> positive = mine;
    for (V& v : positive.value) v = std::abs(v);
    const Stream<V> in = encode_input(positive, n, false);
    // Switch 0: every non-empty part and owned sum goes dense; the byte bound: none does.
    const DenseSwitch eager{0.0}, lazy{1.0};
    auto moved_with = [&](const DenseSwitch& sw) {
      CollectiveConfig config;
      config.dense_switch = sw;
      auto ar = make_sparse_allreduce<V>("ssar-split-ag", comm, n, config);
      const CommStats before = comm.stats();
      const Stream<V>& result = ar->allreduce(in);
      CHECK(on_all_ranks(!result.is_dense() && result.count() == 50));
      return comm.stats() - before;
    };
    const CommStats dense_split = moved_with(eager), sparse_split = moved_with(lazy);
    // Only the Split phase differs: the parts sent, and the P-1 parts received.
    uint64_t sent = 0;
    for (int r = 0; r < size; ++r) {
      if (r != rank) sent += part_bytes(owned_range(n, size, r), eager) - part_bytes(owned_range(n, size, r), lazy);
    }
    const Range owned = owned_range(n, size, rank);
    const uint64_t received = static_cast<uint64_t>(size - 1) * (part_bytes(owned, eager) - part_bytes(owned, lazy));
    CAPTURE(rank, size, dense_split.bytes_sent, sparse_split.bytes_sent, sent, dense_split.bytes_received,
            sparse_split.bytes_received, received);
    CHECK(on_all_ranks(dense_split.bytes_sent - sparse_split.bytes_sent == sent &&
                       dense_split.bytes_received - sparse_split.bytes_received == received));
  }
  SECTION("dsar-split-ag: each owner's part of the streams, then the dense slices") {
    auto ar = make_sparse_allreduce<V>("dsar-split-ag", comm, n, {});
    const DenseSwitch sw;
    // Part r holds this rank's (and every rank's) pairs in range r.
    uint64_t sent = 0;
    for (int r = 0; r < size; ++r) {
      if (r != rank) sent += part_bytes(owned_range(n, size, r), sw);
    }
    uint64_t received = static_cast<uint64_t>(size - 1) * part_bytes(owned_range(n, size, rank), sw);
    const uint64_t gathered = (n - owned_range(n, size, rank).length()) * sizeof(V);
    sent += gathered;
    received += gathered;
    const CommStats moved = moved_by(*ar);
    CAPTURE(rank, size, moved.bytes_sent, moved.bytes_received, sent, received);
    CHECK(on_all_ranks(moved.bytes_sent == sent && moved.bytes_received == received));
  }
  SECTION("dsar-early: the split inside the group, the reduce-scatter, the allgather") {
    // Groups of 2 (a reduce-scatter across P/2 groups at even P) and of 8, or the largest
    // divisor of P below.
    const int requested = GENERATE(2, 8);
    CollectiveConfig config;
    config.group_size = requested;
    auto ar = make_sparse_allreduce<V>("dsar-early", comm, n, config);
    const int g = early_dsar_group(size, config.group_size), q_count = size / g;
    const int j = rank % g, q = rank / g;
    const Range group_range = owned_range(n, g, j);
    const Range slice = owned_range(group_range.length(), q_count, q);
    const DenseSwitch sw = config.dense_switch;
    uint64_t sent = 0;
    for (int other = 0; other < g; ++other) {
      if (other != j) sent += part_bytes(owned_range(n, g, other), sw);
    }
    uint64_t received = static_cast<uint64_t>(g - 1) * part_bytes(group_range, sw);
    const uint64_t dense = (group_range.length() - slice.length()) * sizeof(V) + (n - slice.length()) * sizeof(V);
    sent += dense;
    received += dense;
    const CommStats moved = moved_by(*ar);
    CAPTURE(rank, size, g, moved.bytes_sent, moved.bytes_received, sent, received);
    CHECK(on_all_ranks(moved.bytes_sent == sent && moved.bytes_received == received));
  }
  SECTION("auto, model only: the chosen algorithm's bytes plus the small agreement on k") {
    CollectiveConfig model_only = measured();
    model_only.tie_trials = 0;
    auto ar = make_sparse_allreduce<V>("auto", comm, n, model_only);
    for (int call = 0; call < 3; ++call) {
      const CommStats by_auto = moved_by(*ar);
      const std::string chosen = ar->choice();
      // Every rank must have chosen alike (or the ranks would be in different collectives).
      const std::string rank0_chose = on_rank0(chosen);
      CAPTURE(call, rank, size, chosen, rank0_chose);
      REQUIRE(on_all_ranks(!chosen.empty() && chosen == rank0_chose));
      // The same algorithm, made afresh with the same configuration, on the same input.
      const CommStats direct = moved_by(*make_sparse_allreduce<V>(chosen, comm, n, measured()));
      CAPTURE(by_auto.bytes_sent, direct.bytes_sent, by_auto.bytes_received, direct.bytes_received);
      // k travels in 8-byte allreduces: two on the first call, then one every 16th.
      const uint64_t k_bytes = call == 0 ? 16 : 0;
      CHECK(on_all_ranks(by_auto.bytes_sent == direct.bytes_sent + k_bytes &&
                         by_auto.bytes_received == direct.bytes_received + k_bytes));
    }
  }
  SECTION("auto: a near tie is timed over the calls that follow, each running one tied algorithm") {
    // Every algorithm ties: each is made and run once untimed, then timed, one call at a
    // time, every call returning its exact sum; then the fastest runs. Timed calls:
    // tie_trials, or up to tie_max_trials until they add up to tie_seconds.
    CollectiveConfig exact = all_tied(1e-10);  // a fast link: a float moves as fast as it adds
    exact.cold_calls = 0;
    CollectiveConfig longest = exact;
    longest.tie_seconds = 1e300;
    longest.tie_max_trials = 4;
    for (const auto& [all_tie, timed] : {std::pair{exact, 2}, std::pair{longest, 4}}) {
      CAPTURE(timed);
      auto ar = make_sparse_allreduce<V>("auto", comm, n, all_tie);
      const auto& registry = sparse_allreduce_registry<V>();
      const auto candidates = static_cast<int>(
          std::count_if(registry.begin(), registry.end(),
                        [](const auto& info) { return info.cost != nullptr && info.canonical_order; }));
      const int exploring = candidates * (1 + timed);
      const std::vector<V> expect = reference_sum(mine, n);
      std::map<std::string, int> runs;
      std::string settled;
      for (int call = 0; call < exploring + 3; ++call) {
        const CommStats before = comm.stats();
        const bool right = equals(ar->allreduce(input), n, expect);
        const CommStats by_auto = comm.stats() - before;
        const std::string chosen = ar->choice();
        const std::string rank0_chose = on_rank0(chosen);
        CAPTURE(call, rank, size, chosen, rank0_chose);
        CHECK(on_all_ranks(right));
        REQUIRE(on_all_ranks(!chosen.empty() && chosen == rank0_chose));
        CHECK(ar->timing_tie() == call + 1 < exploring);
        const CommStats direct = moved_by(*make_sparse_allreduce<V>(chosen, comm, n, all_tie));
        // k travels in 8-byte allreduces: two on the first call, then one every 16th; a
        // timed call's time travels in another (a candidate's first call is untimed).
        uint64_t extra = call == 0 ? 16 : call % 16 == 0 ? 8 : 0;
        if (call < exploring && call % (1 + timed) != 0) extra += sizeof(double);
        CAPTURE(by_auto.bytes_sent, direct.bytes_sent, extra);
        CHECK(on_all_ranks(by_auto.bytes_sent == direct.bytes_sent + extra));
        if (call < exploring) {
          ++runs[chosen];
        } else {
          if (settled.empty()) settled = chosen;
          CHECK(chosen == settled);
        }
      }
      CHECK(static_cast<int>(runs.size()) == candidates);
      for (const auto& [name, count] : runs) {
        CAPTURE(name);
        CHECK(count == 1 + timed);
      }
    }
  }
  SECTION("auto: a process's first calls run the model's pick alone, untimed") {
    CollectiveConfig cold = all_tied(1e-10);
    cold.cold_calls = 3;
    auto ar = make_sparse_allreduce<V>("auto", comm, n, cold);
    const std::vector<V> expect = reference_sum(mine, n);
    std::map<std::string, int> runs;
    for (int call = 0; call < 3 + 4; ++call) {
      const CommStats before = comm.stats();
      const bool right = equals(ar->allreduce(input), n, expect);
      const CommStats by_auto = comm.stats() - before;
      const std::string chosen = ar->choice();
      CAPTURE(call, rank, size, chosen);
      CHECK(on_all_ranks(right));
      REQUIRE(on_all_ranks(!chosen.empty() && chosen == on_rank0(chosen)));
      if (call < cold.cold_calls) {
        const CommStats direct = moved_by(*make_sparse_allreduce<V>(chosen, comm, n, cold));
        CHECK(on_all_ranks(by_auto.bytes_sent == direct.bytes_sent + (call == 0 ? 16 : 0)));
      }
      ++runs[chosen];
    }
    // After the cold calls, the tie's timing runs the other candidates.
    CHECK(runs.size() > 1);
  }
  SECTION("auto: over a slow link a near tie is left to the model") {
    // Moving a value costs 1000 times what adding it does: the model's byte counts decide,
    // so the first call runs the model's pick alone.
    const CollectiveConfig slow = all_tied(1e-7);
    auto ar = make_sparse_allreduce<V>("auto", comm, n, slow);
    const std::vector<V> expect = reference_sum(mine, n);
    const CommStats before = comm.stats();
    const bool right = equals(ar->allreduce(input), n, expect);
    const CommStats by_auto = comm.stats() - before;
    const std::string chosen = ar->choice();
    CAPTURE(rank, size, chosen);
    CHECK(on_all_ranks(right));
    REQUIRE(on_all_ranks(!chosen.empty() && chosen == on_rank0(chosen)));
    const CommStats direct = moved_by(*make_sparse_allreduce<V>(chosen, comm, n, slow));
    CAPTURE(by_auto.bytes_sent, direct.bytes_sent);
    CHECK(on_all_ranks(by_auto.bytes_sent == direct.bytes_sent + 16));  // and k's exchange
  }
}

TEST_CASE("ssar-shm runs only where its shared window fits, and auto offers it only there", "[collectives]") {
  const int rank = world_rank(), size = world_size();
  CountedComm comm(MPI_COMM_WORLD);
  const uint32_t n = 1000;
  REQUIRE(measured().measured->shared_room > 0);  // the tests' ranks share one node
  CollectiveConfig cramped = measured();
  cramped.measured->shared_room = 1;
  CHECK_THROWS_WITH(make_sparse_allreduce<float>("ssar-shm", comm, n, cramped),
                    Catch::Contains("ssar-shm") && Catch::Contains("/dev/shm"));
  cramped.measured->shared_room = 0;
  CHECK_THROWS_WITH(make_sparse_allreduce<float>("ssar-shm", comm, n, cramped), Catch::Contains("one node"));

  // auto with every candidate tied times each one it offers, then settles.
  const Contribution<float> mine = contribution<float>({Kind::kRandom, 0.05}, n, rank, size, 4000);
  const Stream<float> input = encode_input(mine, n, false);
  auto chosen = [&](std::optional<uint64_t> room) {
    CollectiveConfig tied = all_tied(1e-10);
    tied.cold_calls = 0;
    if (room) tied.measured->shared_room = *room;
    auto ar = make_sparse_allreduce<float>("auto", comm, n, tied);
    std::set<std::string> ran;
    for (int call = 0; call < 40; ++call) {
      ar->allreduce(input);
      ran.insert(ar->choice());
    }
    return ran;
  };
  // One rank moves nothing, and the model ties only the algorithms it prices at 0 there.
  if (size > 1) {
    const std::set<std::string> offered = chosen(std::nullopt);
    CAPTURE(offered);
    CHECK(offered.count("ssar-shm") == 1);
  }
  CHECK(chosen(uint64_t{0}).count("ssar-shm") == 0);
  CHECK(chosen(uint64_t{1}).count("ssar-shm") == 0);
}

TEST_CASE("an unknown algorithm name lists the known ones", "[collectives]") {
  CountedComm comm(MPI_COMM_WORLD);
  REQUIRE_THROWS_AS(make_sparse_allreduce<float>("carrier-pigeon", comm, 10, {}), std::invalid_argument);
  REQUIRE_THROWS_WITH(make_sparse_allreduce<double>("carrier-pigeon", comm, 10, {}),
                      Catch::Contains("carrier-pigeon") && Catch::Contains("ssar-rec-dbl") &&
                          Catch::Contains("dsar-early") && Catch::Contains("auto"));
}
