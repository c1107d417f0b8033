// Every top-k allreduce in the registry (topk_allreduce.h), float and double. Values are
// small integers, so every sum is exact whatever the order of the additions, and the
// invariants hold bit for bit:
//   - conservation: sum over ranks of `selected` == result + sum over ranks of `dropped`;
//   - every rank holds the same result, bit for bit, and a fresh object given the same
//     calls gives the same results (ties in magnitude are broken by index, never by timing);
//   - with k at least the size of the union of all ranks' inputs nothing is lost: the
//     result is MPI_Allreduce's sum and nothing is dropped;
//   - what each algorithm promises of its result (kExpectations below);
//   - at P = 4 and 8, the bytes counted per rank and call lie within 10% of Table 1's band
//     (on k random pairs per rank with untied magnitudes; printed for docs/performance.md).
// Inputs: random overlapping index sets, identical sets, disjoint sets, power-law sets,
// some ranks empty, all empty; N from 0 and below P to not divisible by P. Each object is
// called many times in a row, as a trainer calls it. Every assertion is on a value all
// ranks agree on (on_all_ranks), so a failure on one rank fails the test everywhere
// instead of hanging the others. A new algorithm in the registry is tested as soon as it
// says what it promises in kExpectations; until then every test fails, naming it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "collectives/topk_allreduce.h"
#include "contributions.h"
#include "mpi_test_util.h"
#include "sparse/sample.h"
#include "sparse/stream_sum.h"
#include "stream_test_util.h"

using namespace mpisgd;
using namespace mpisgd::test;

namespace {

// What an algorithm promises beyond the contract's invariants. A newly registered
// algorithm fails every test until it has a line here.
enum class ResultSize {
  kUnion,     // keeps everything: the result is the full sum, whatever k
  kAtMostK,   // at most k non-zeros (gTop-k's merges each keep the top k)
  kFullSums,  // every index in the result carries the full sum over ranks of that index
};
enum class VolumeOf {
  kMeanRank,     // Table 1's volume is what a rank sends on average
  kBusiestRank,  // ... what the busiest rank sends (a tree's root)
};
struct Expectation {
  ResultSize result;
  bool drops_nothing;  // `dropped` is always empty
  // Selects by a threshold carried over from earlier calls (Ok-Topk's reuse, section
  // 3.1.3): with k at least the union it is exact only where the threshold is, so on a
  // fresh object's first call and while k stays at or above every union, not when k and
  // the inputs change from call to call.
  bool reuses_threshold;
  VolumeOf volume;
};

const std::map<std::string, Expectation> kExpectations = {
    {"topk-ag", {ResultSize::kUnion, true, false, VolumeOf::kMeanRank}},
    {"topk-dsa", {ResultSize::kUnion, true, false, VolumeOf::kMeanRank}},
    {"gtopk", {ResultSize::kAtMostK, false, false, VolumeOf::kBusiestRank}},
    {"oktopk", {ResultSize::kFullSums, false, true, VolumeOf::kMeanRank}},
};

const Expectation* expectation(const std::string& name) {
  const auto it = kExpectations.find(name);
  return it == kExpectations.end() ? nullptr : &it->second;
}

// Densities stay at or below 0.3, so that a rank's pairs fit in a sparse stream (the byte
// bound is N/2 pairs for float), as a top-k selection's do.
const std::vector<Pattern>& all_patterns() {
  static const std::vector<Pattern> patterns = {
      {Kind::kRandom, 0},        {Kind::kRandom, 1e-3},    {Kind::kRandom, 0.02},     {Kind::kRandom, 0.3},
      {Kind::kIdentical, 0.02},  {Kind::kIdentical, 0.3},  {Kind::kDisjoint, 0.05},   {Kind::kDisjoint, 0.3},
      {Kind::kPowerLaw, 0.05},   {Kind::kSomeEmpty, 0.02}, {Kind::kSomeEmpty, 0.3},
  };
  return patterns;
}

// The per-rank budget k a selection of the pattern aimed at; the same on every rank.
uint64_t budget(const Pattern& pattern, uint32_t n, int size) {
  return pattern.kind == Kind::kDisjoint ? items(pattern.density / size, n) : items(pattern.density, n);
}

// Non-zero integers in [-8, 8]: sums over up to 13 ranks are exact in float, and the
// many ties in magnitude test that selections break them by index.
template <class V>
Contribution<V> contribution(const Pattern& pattern, uint32_t n, int rank, int size, uint64_t seed) {
  return test::contribution<V>(pattern, n, rank, size, seed, 8);
}

// The selection as a trainer passes it: pairs, dense only where they would take more bytes
// than the dense form (a pair or two over N = 1 or 2).
template <class V>
Stream<V> selected_stream(const Contribution<V>& c, uint32_t n) {
  Stream<V> s(n);
  encode<V>(c.index, c.value, {0, n}, kByteBound, s);
  return s;
}

// True if every rank's `s` has rank 0's bytes (compared by a 64-bit FNV-1a hash of them).
template <class V>
bool same_bits_everywhere(const Stream<V>& s) {
  uint64_t hash = 0xcbf29ce484222325;
  const auto* bytes = static_cast<const unsigned char*>(s.data());
  for (size_t j = 0; j < s.bytes(); ++j) hash = (hash ^ bytes[j]) * 0x100000001b3;
  uint64_t rank0 = hash;
  MPI_Bcast(&rank0, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  return hash == rank0;
}

// Number of indices some rank selected (every input value is non-zero).
template <class V>
uint64_t union_size(const std::vector<V>& selected) {
  std::vector<int> in(selected.size());
  for (size_t i = 0; i < selected.size(); ++i) in[i] = selected[i] != V{0};
  if (!in.empty()) MPI_Allreduce(MPI_IN_PLACE, in.data(), static_cast<int>(in.size()), MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  return static_cast<uint64_t>(std::count(in.begin(), in.end(), 1));
}

// The index positions a result stream names: its pairs, or a dense stream's non-zeros.
template <class V>
std::vector<uint32_t> named_indices(const Stream<V>& s) {
  std::vector<uint32_t> out;
  if (s.is_dense()) {
    const auto v = s.values();
    for (uint32_t i = 0; i < v.size(); ++i) {
      if (v[i] != V{0}) out.push_back(i);
    }
  } else {
    for (const Pair<V>& p : s.pairs()) out.push_back(p.index);
  }
  return out;
}

// Sizes: empty, below P, P - 1, not divisible by most P, and large enough to stay sparse.
std::vector<uint32_t> sizes() {
  const auto p = static_cast<uint32_t>(world_size());
  std::vector<uint32_t> n = {0, 1, 2, 7, 1000, 10007};
  if (p > 1 && std::find(n.begin(), n.end(), p - 1) == n.end()) n.insert(n.begin() + 2, p - 1);
  return n;
}

// Every registered algorithm, with its expectations; fails (on every rank) for one that
// has none.
template <class V>
std::vector<std::pair<const TopkCollectiveInfo<V>*, const Expectation*>> registered() {
  std::vector<std::pair<const TopkCollectiveInfo<V>*, const Expectation*>> all;
  for (const auto& info : topk_allreduce_registry<V>()) {
    INFO("top-k algorithm '" << info.name << "' is registered but has no line in kExpectations "
                             << "(tests/mpi/test_topk_collectives.cpp): add what it promises there");
    REQUIRE(on_all_ranks(expectation(info.name) != nullptr));
    all.emplace_back(&info, expectation(info.name));
  }
  return all;
}

// How k is set in a run of calls.
enum class Budget {
  kSelection,  // the budget the pattern's selection aimed at: algorithms drop what they drop,
               // except where k happens to cover the union (identical inputs, P = 1)
  kAmple,      // k = N, at least the union: nothing may be lost
};

// Runs every pattern in a row through one object per algorithm and checks every call.
template <class V>
void check_calls(uint32_t n, Budget budget_kind, const TopkCollectiveConfig& config, uint64_t& seed) {
  const int rank = world_rank(), size = world_size();
  CountedComm comm(MPI_COMM_WORLD);
  const auto algorithms = registered<V>();
  std::vector<std::unique_ptr<TopkAllreduce<V>>> objects;
  for (const auto& [info, expect] : algorithms) objects.push_back(info->make(comm, n, config));
  // One `dropped` per algorithm for the whole run: each call must overwrite what the last left.
  std::vector<Stream<V>> dropped(algorithms.size(), Stream<V>(n));
  for (const Pattern& pattern : all_patterns()) {
    // At the largest N, the densest patterns only repeat what smaller N show, at a cost
    // that dominates the suite when 13 ranks share 2 cores.
    if (n > 5000 && pattern.density >= 0.3) continue;
    const Contribution<V> mine = contribution<V>(pattern, n, rank, size, seed++);
    const Stream<V> selected = selected_stream(mine, n);
    const std::vector<V> input = dense_of(selected, n);
    const std::vector<V> reference = summed(input);
    const uint64_t in_union = union_size(input);
    const uint64_t k = budget_kind == Budget::kAmple ? n : budget(pattern, n, size);
    for (size_t a = 0; a < algorithms.size(); ++a) {
      const auto& [info, expect] = algorithms[a];
      INFO("algorithm " << info->name << ", N " << n << ", " << pattern.name() << ", k " << k << " (union "
                        << in_union << "), P " << size);
      const Stream<V>& result = objects[a]->allreduce(selected, k, dropped[a]);
      // A malformed stream is not read: its indices could lie outside [0, N).
      const bool formed = well_formed(result, n) && well_formed(dropped[a], n);
      const std::vector<V> got = formed ? dense_of(result, n) : std::vector<V>(n, V{0});
      const std::vector<V> all_dropped = summed(formed ? dense_of(dropped[a], n) : std::vector<V>(n, V{0}));
      bool conserved = true;
      for (uint32_t i = 0; i < n; ++i) conserved = conserved && reference[i] == got[i] + all_dropped[i];
      bool promised = formed;
      switch (expect->result) {
        case ResultSize::kUnion:
          promised = promised && got == reference && (result.is_dense() || result.count() <= in_union);
          break;
        case ResultSize::kAtMostK:
          promised = promised && nonzeros(result) <= k;
          break;
        case ResultSize::kFullSums:
          for (uint32_t i : formed ? named_indices(result) : std::vector<uint32_t>{}) {
            promised = promised && got[i] == reference[i];
          }
          break;
      }
      const std::pair<const char*, bool> checks[] = {
          {"result and dropped are well-formed streams over [0, N)", formed},
          {"the result has the same bits on every rank", same_bits_everywhere(result)},
          {"conservation: sum of selected == result + sum of dropped", conserved},
          {"k >= the union: the exact sum, nothing dropped",
           k < in_union || (budget_kind == Budget::kSelection && expect->reuses_threshold) ||
               (got == reference && nonzeros(dropped[a]) == 0)},
          {"an algorithm that keeps everything leaves dropped empty",
           !expect->drops_nothing || dropped[a].count() == 0},
          {"the result is what kExpectations says", promised},
      };
      // One agreement on all of them, and one per check, naming it, only if that fails:
      // each collective costs milliseconds when 13 ranks share 2 cores.
      const bool all = std::all_of(std::begin(checks), std::end(checks), [](const auto& c) { return c.second; });
      if (on_all_ranks(all)) continue;
      for (const auto& [what, ok] : checks) {
        INFO(what);
        CHECK(on_all_ranks(ok));
      }
    }
  }
}

}  // namespace

TEST_CASE("top-k: every registered algorithm says what it promises", "[collectives][topk]") {
  // registered() fails, naming it, for an algorithm without a line in kExpectations.
  CHECK(registered<float>().size() == topk_allreduce_registry<float>().size());
  CHECK(registered<double>().size() == topk_allreduce_registry<double>().size());
}

TEMPLATE_TEST_CASE("top-k: conservation, agreement and each algorithm's result, call after call",
                   "[collectives][topk]", float, double) {
  // Short periods, so that Ok-Topk recomputes its boundaries and thresholds within a run.
  TopkCollectiveConfig config;
  config.repartition_period = 3;
  config.reuse_period = 2;
  uint64_t seed = 1;
  for (uint32_t n : sizes()) check_calls<TestType>(n, Budget::kSelection, config, seed);
}

TEMPLATE_TEST_CASE("top-k: with k at least the union nothing is lost, call after call", "[collectives][topk]", float,
                   double) {
  uint64_t seed = 5000;
  for (uint32_t n : sizes()) check_calls<TestType>(n, Budget::kAmple, {}, seed);
}

TEMPLATE_TEST_CASE("top-k: k equal to the union loses nothing on a fresh object", "[collectives][topk]", float,
                   double) {
  using V = TestType;
  const int rank = world_rank(), size = world_size();
  CountedComm comm(MPI_COMM_WORLD);
  uint64_t seed = 7000;
  for (uint32_t n : {7u, 1000u}) {
    for (const Pattern& pattern : all_patterns()) {
      const Contribution<V> mine = contribution<V>(pattern, n, rank, size, seed++);
      const Stream<V> selected = selected_stream(mine, n);
      const std::vector<V> input = dense_of(selected, n);
      const std::vector<V> reference = summed(input);
      const uint64_t k = union_size(input);
      for (const auto& [info, expect] : registered<V>()) {
        INFO("algorithm " << info->name << ", N " << n << ", " << pattern.name() << ", k = union = " << k << ", P "
                          << size);
        Stream<V> dropped(n);
        const auto fresh = info->make(comm, n, {});
        const Stream<V>& result = fresh->allreduce(selected, k, dropped);
        CHECK(on_all_ranks(well_formed(result, n) && dense_of(result, n) == reference && nonzeros(dropped) == 0));
      }
    }
  }
}

TEMPLATE_TEST_CASE("top-k: results are deterministic", "[collectives][topk]", float, double) {
  // Two fresh objects given the same calls give the same bits (ties are broken by index,
  // never by arrival order), dropped pairs included.
  using V = TestType;
  const int rank = world_rank(), size = world_size();
  CountedComm comm(MPI_COMM_WORLD);
  const uint32_t n = 1000;
  const std::vector<Pattern> patterns = {{Kind::kRandom, 0.05}, {Kind::kIdentical, 0.05}, {Kind::kPowerLaw, 0.1}};
  for (const auto& [info, expect] : registered<V>()) {
    auto first = info->make(comm, n, {}), second = info->make(comm, n, {});
    Stream<V> dropped_first(n), dropped_second(n);
    uint64_t seed = 9000;
    for (const Pattern& pattern : patterns) {
      INFO("algorithm " << info->name << ", " << pattern.name() << ", P " << size);
      const Stream<V> selected = selected_stream(contribution<V>(pattern, n, rank, size, seed++), n);
      const uint64_t k = budget(pattern, n, size) / 2;
      const Stream<V>& a = first->allreduce(selected, k, dropped_first);
      const Stream<V>& b = second->allreduce(selected, k, dropped_second);
      const bool same = a.bytes() == b.bytes() && std::memcmp(a.data(), b.data(), a.bytes()) == 0 &&
                        dropped_first.bytes() == dropped_second.bytes() &&
                        std::memcmp(dropped_first.data(), dropped_second.data(), dropped_first.bytes()) == 0;
      CHECK(on_all_ranks(same));
    }
  }
}

TEMPLATE_TEST_CASE("top-k: bytes sent per rank and call lie in Table 1's band", "[collectives][topk]", float,
                   double) {
  // Table 1 of the Ok-Topk paper at the sizes it assumes (n >> k): every rank selects
  // exactly k uniform random distinct indices, N = 131 P k at P = 8. The first call is
  // shown apart (Ok-Topk computes its boundaries and thresholds then); the band is checked
  // on the mean of the calls after it.
  using V = TestType;
  const int rank = world_rank(), size = world_size();
  if (size != 4 && size != 8) return;
  CountedComm comm(MPI_COMM_WORLD);
  const uint64_t k = 1000;
  const uint32_t n = 1 << 20;
  const int calls = 4;
  std::mt19937_64 rng(11 + static_cast<uint64_t>(rank));
  Contribution<V> mine;
  mine.index = distinct_indices(n, k, rng);
  // Magnitudes without ties here: a threshold selection keeps every sum tied with the k-th
  // largest, and small integers tie by the hundred.
  std::uniform_real_distribution<double> magnitude(0.1, 1.0);
  for (uint64_t j = 0; j < k; ++j) mine.value.push_back(static_cast<V>((rng() % 2 ? 1 : -1) * magnitude(rng)));
  const Stream<V> selected = selected_stream(mine, n);
  REQUIRE(on_all_ranks(!selected.is_dense() && selected.count() == k));
  TopkVolumeInputs in;
  in.k = k;
  in.ranks = size;
  in.dim = n;
  in.pair_bytes = sizeof(Pair<V>);
  in.value_bytes = sizeof(V);
  for (const auto& [info, expect] : registered<V>()) {
    auto ar = info->make(comm, n, {});
    Stream<V> dropped(n);
    const CommStats start = comm.stats();
    ar->allreduce(selected, k, dropped);
    const CommStats after_first = comm.stats();
    for (int c = 0; c < calls; ++c) ar->allreduce(selected, k, dropped);
    // [first call, later calls per call], summed and maximised over ranks.
    double mean[2] = {static_cast<double>(after_first.bytes_sent - start.bytes_sent),
                      static_cast<double>(comm.stats().bytes_sent - after_first.bytes_sent) / calls};
    double busiest[2] = {mean[0], mean[1]};
    MPI_Allreduce(MPI_IN_PLACE, mean, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, busiest, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    for (double& m : mean) m /= size;
    const double low = info->volume_low(in), high = info->volume_high(in);
    const bool by_mean = expect->volume == VolumeOf::kMeanRank;
    const double measured = by_mean ? mean[1] : busiest[1];
    if (rank == 0) {
      std::printf("top-k volume %-9s %-6s P=%d k=%llu N=%u: bytes sent per rank per call: first call mean %.0f "
                  "busiest %.0f; later calls mean %.0f busiest %.0f; Table 1 [%.0f, %.0f]; checked: %s, %.3f of "
                  "the low end\n",
                  info->name.c_str(), sizeof(V) == 4 ? "float" : "double", size, static_cast<unsigned long long>(k), n,
                  mean[0], busiest[0], mean[1], busiest[1], low, high, by_mean ? "mean" : "busiest", measured / low);
      std::fflush(stdout);
    }
    INFO("algorithm " << info->name << ", P " << size << ": measured " << measured << " ("
                      << (by_mean ? "mean over ranks" : "busiest rank") << "), Table 1 [" << low << ", " << high
                      << "]");
    CHECK(on_all_ranks(low * 0.9 <= measured && measured <= high * 1.1));
  }
}

TEST_CASE("top-k: an unknown algorithm name lists the known ones", "[collectives][topk]") {
  CountedComm comm(MPI_COMM_WORLD);
  REQUIRE_THROWS_AS(make_topk_allreduce<float>("carrier-pigeon", comm, 10, {}), std::invalid_argument);
  REQUIRE_THROWS_WITH(make_topk_allreduce<double>("carrier-pigeon", comm, 10, {}),
                      Catch::Contains("carrier-pigeon") && Catch::Contains(topk_allreduce_registry<double>()[0].name));
}
