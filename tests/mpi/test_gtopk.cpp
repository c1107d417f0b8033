// gTop-k (src/collectives/gtopk.cpp), float and double, against references built from the
// dense inputs of all ranks. Values are small non-zero integers, so every sum is exact in
// any order and the checks hold bit for bit; their many ties in magnitude test that every
// merge breaks them by index. Per call:
//   - conservation: sum over ranks of `selected` == result + sum over ranks of `dropped`;
//   - the result is the same on every rank, bit for bit, with at most k non-zeros;
//   - with k at least the union of the inputs, the result is MPI_Allreduce's sum;
//   - the result and this rank's `dropped` equal a serial replay of the tree (fold, then
//     binomial rounds, each merge keeping the top k and its rank the rest).
// Inputs: random overlapping index sets of several densities (some above k, some dense
// streams), identical sets, disjoint sets; N from 0 and below P up; k from 0 to N. One
// object per N takes every call in a row. At P = 4 and 8, the busiest rank's bytes per call
// are compared with Table 1: both ways within 10% of it, sent within 10% of half of it.
// Every assertion is on a value all ranks agree on (on_all_ranks).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "collectives/collective_util.h"
#include "collectives/topk_allreduce.h"
#include "mpi_test_util.h"
#include "stream_test_util.h"
#include "sparse/stream_sum.h"

using namespace mpisgd;
using namespace mpisgd::test;

namespace {

enum class Kind {
  kRandom,     // each index with probability `density`, independently per rank
  kIdentical,  // the same indices on every rank
  kDisjoint,   // each index has one owner rank, which takes it with probability `density`
};

struct Pattern {
  Kind kind;
  double density;
  std::string name() const {
    static const char* names[] = {"random", "identical", "disjoint"};
    std::ostringstream s;
    s << names[static_cast<int>(kind)] << " " << density;
    return s.str();
  }
};

// This rank's input as a dense vector: integers in [-4, 4] \ {0} on the chosen indices.
template <class V>
std::vector<V> contribution(const Pattern& pattern, uint32_t n, int rank, int size, uint64_t seed) {
  std::mt19937_64 shared(seed), own(seed * 7919 + static_cast<uint64_t>(rank) + 1);
  std::uniform_real_distribution<double> u(0, 1);
  std::uniform_int_distribution<int> owner(0, size - 1), magnitude(1, 4);
  std::vector<V> d(n, V{0});
  for (uint32_t i = 0; i < n; ++i) {
    bool take = false;
    switch (pattern.kind) {
      case Kind::kRandom:
        take = u(own) < pattern.density;
        break;
      case Kind::kIdentical:
        take = u(shared) < pattern.density;
        break;
      case Kind::kDisjoint:
        take = owner(shared) == rank && u(own) < pattern.density;
        break;
    }
    if (take) d[i] = static_cast<V>((own() % 2 ? 1 : -1) * magnitude(own));
  }
  return d;
}

// The input as a trainer encodes it: pairs, dense past the summation switch.
template <class V>
Stream<V> stream_of(const std::vector<V>& d) {
  std::vector<uint32_t> index;
  std::vector<V> value;
  for (uint32_t i = 0; i < d.size(); ++i) {
    if (d[i] != V{0}) {
      index.push_back(i);
      value.push_back(d[i]);
    }
  }
  const auto n = static_cast<uint32_t>(d.size());
  Stream<V> s(n);
  encode<V>(index, value, {0, n}, DenseSwitch{}, s);
  return s;
}

// True if this rank's `s` has rank 0's bytes.
template <class V>
bool same_as_rank0(const Stream<V>& s) {
  uint64_t bytes = s.bytes();
  MPI_Bcast(&bytes, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  std::vector<char> rank0(bytes);
  if (world_rank() == 0) std::memcpy(rank0.data(), s.data(), bytes);
  MPI_Bcast(rank0.data(), static_cast<int>(bytes), MPI_BYTE, 0, MPI_COMM_WORLD);
  return s.bytes() == bytes && std::memcmp(rank0.data(), s.data(), bytes) == 0;
}

// Every rank's dense input, on every rank.
template <class V>
std::vector<std::vector<V>> gathered(const std::vector<V>& mine) {
  const auto n = static_cast<int>(mine.size());
  std::vector<V> all(mine.size() * static_cast<size_t>(world_size()));
  if (n > 0) MPI_Allgather(mine.data(), n, mpi_type<V>(), all.data(), n, mpi_type<V>(), MPI_COMM_WORLD);
  std::vector<std::vector<V>> out;
  for (int r = 0; r < world_size(); ++r) out.emplace_back(all.begin() + r * n, all.begin() + (r + 1) * n);
  return out;
}

// Keeps the k largest |values| of `v` (ties to the lower index) and adds the rest to `rest`.
template <class V>
void cut(std::vector<V>& v, uint64_t k, std::vector<V>& rest) {
  std::vector<uint32_t> order;
  for (uint32_t i = 0; i < v.size(); ++i) {
    if (v[i] != V{0}) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return std::abs(v[a]) > std::abs(v[b]); });
  for (size_t j = k; j < order.size(); ++j) {
    rest[order[j]] += v[order[j]];
    v[order[j]] = V{0};
  }
}

// The tree replayed on one rank: each input cut to its top k, the fold's pairs (2i, 2i+1)
// merged into the odd rank, then binomial rounds into the lower new rank. Every merge keeps
// the top k of the sum; the merging rank keeps the rest in dropped[rank].
template <class V>
std::vector<V> replay(std::vector<std::vector<V>> node, uint64_t k, std::vector<std::vector<V>>& dropped) {
  const int size = static_cast<int>(node.size());
  dropped.assign(node.size(), std::vector<V>(node[0].size(), V{0}));
  for (int r = 0; r < size; ++r) cut(node[r], k, dropped[r]);
  auto merge = [&](int into, int from) {
    for (size_t i = 0; i < node[into].size(); ++i) node[into][i] += node[from][i];
    cut(node[into], k, dropped[into]);
  };
  const Fold fold(0, size);
  for (int i = 0; i < fold.rem; ++i) merge(2 * i + 1, 2 * i);
  for (int mask = 1; mask < fold.p2; mask <<= 1) {
    for (int nr = 0; nr < fold.p2; nr += 2 * mask) merge(fold.old_rank(nr), fold.old_rank(nr + mask));
  }
  return node[fold.old_rank(0)];
}

// Sizes: empty, below P, P - 1, not divisible by most P, and large enough to stay sparse.
std::vector<uint32_t> sizes() {
  const auto p = static_cast<uint32_t>(world_size());
  std::vector<uint32_t> n = {0, 1, 2, 7, 1000, 5003};
  if (p > 1 && std::find(n.begin(), n.end(), p - 1) == n.end()) n.insert(n.begin() + 2, p - 1);
  return n;
}

const TopkCollectiveInfo<float>* gtopk_info() {
  for (const auto& info : topk_allreduce_registry<float>()) {
    if (info.name == "gtopk") return &info;
  }
  return nullptr;
}

}  // namespace

TEMPLATE_TEST_CASE("gtopk: conservation, agreement, at most k, the tree's top k, call after call",
                   "[collectives][gtopk]", float, double) {
  using V = TestType;
  const int rank = world_rank(), size = world_size();
  CountedComm comm(MPI_COMM_WORLD);
  const std::vector<Pattern> patterns = {{Kind::kRandom, 0},      {Kind::kRandom, 0.01},   {Kind::kRandom, 0.2},
                                         {Kind::kRandom, 1.0},    {Kind::kIdentical, 0.05}, {Kind::kDisjoint, 0.3}};
  uint64_t seed = 1;
  for (uint32_t n : sizes()) {
    auto ar = make_topk_allreduce<V>("gtopk", comm, n, {});
    Stream<V> dropped(n);  // one for the whole run: each call must overwrite what the last left
    for (const Pattern& pattern : patterns) {
      // At the largest N the dense patterns only repeat what N = 1000 shows.
      if (n > 1000 && pattern.density >= 0.2) continue;
      const std::vector<V> mine = contribution<V>(pattern, n, rank, size, seed++);
      const Stream<V> selected = stream_of(mine);
      const std::vector<V> reference = summed(mine);
      const std::vector<std::vector<V>> inputs = gathered(mine);
      uint64_t in_union = 0;
      for (uint32_t i = 0; i < n; ++i) {
        in_union += std::any_of(inputs.begin(), inputs.end(), [&](const std::vector<V>& in) { return in[i] != V{0}; });
      }
      // Budgets from none to all, one above N, and the union exactly; each once.
      std::vector<uint64_t> budgets;
      for (uint64_t k : {uint64_t{0}, uint64_t{1}, uint64_t{3}, uint64_t{40}, in_union, uint64_t{n}}) {
        budgets.push_back(std::min<uint64_t>(k, n + 1));
      }
      std::sort(budgets.begin(), budgets.end());
      budgets.erase(std::unique(budgets.begin(), budgets.end()), budgets.end());
      for (uint64_t k : budgets) {
        INFO("N " << n << ", " << pattern.name() << ", k " << k << " (union " << in_union << "), P " << size
                  << ", input " << (selected.is_dense() ? "dense" : "sparse"));
        const Stream<V>& result = ar->allreduce(selected, k, dropped);
        REQUIRE(on_all_ranks(well_formed(result, n) && well_formed(dropped, n)));
        const std::vector<V> got = dense_of(result, n), mine_dropped = dense_of(dropped, n);
        const std::vector<V> all_dropped = summed(mine_dropped);
        const bool same = same_as_rank0(result);
        const bool at_most_k = nonzeros(result) <= k;
        bool conserved = true;
        for (uint32_t i = 0; i < n; ++i) conserved = conserved && reference[i] == got[i] + all_dropped[i];
        const bool lossless = k < in_union || (got == reference && nonzeros(dropped) == 0);
        // Every rank replays the whole tree: at N = 5003 that would dominate the suite when
        // 13 ranks share 2 cores, and adds nothing that N = 1000 does not show.
        bool as_replayed = true;
        if (n > 0 && n <= 1000) {
          std::vector<std::vector<V>> replayed_dropped;
          as_replayed = replay(inputs, k, replayed_dropped) == got && replayed_dropped[rank] == mine_dropped;
        }
        // One agreement per call keeps 13 ranks on 2 cores fast; the captures name the
        // property that failed on the rank that reports it.
        CAPTURE(same, at_most_k, conserved, lossless, as_replayed);
        CHECK(on_all_ranks(same && at_most_k && conserved && lossless && as_replayed));
      }
    }
  }
}

TEMPLATE_TEST_CASE("gtopk: bytes on the busiest rank against Table 1", "[collectives][gtopk]", float, double) {
  // Table 1's 4 k log2(P) words are rank 0's traffic both ways: k pairs received in each
  // reduction round, k pairs sent in each broadcast round. Disjoint inputs of k pairs each
  // give every merge 2k distinct indices, so every message is k pairs.
  using V = TestType;
  const auto* info = gtopk_info();
  REQUIRE(on_all_ranks(info != nullptr));
  TopkVolumeInputs in;
  in.k = 100;
  in.ranks = 8;
  in.pair_bytes = 8;
  CHECK(on_all_ranks(info->volume_low(in) == 3 * 100 * 8 && info->volume_high(in) == info->volume_low(in)));

  const int rank = world_rank(), size = world_size();
  if (size != 4 && size != 8) return;
  CountedComm comm(MPI_COMM_WORLD);
  const uint64_t k = 500;
  const uint32_t n = 100000;
  auto ar = make_topk_allreduce<V>("gtopk", comm, n, {});
  Stream<V> dropped(n);
  in.k = k;
  in.ranks = size;
  in.dim = n;
  in.pair_bytes = sizeof(Pair<V>);
  in.value_bytes = sizeof(V);
  const double volume = info->volume_low(in);
  std::mt19937_64 rng(17 + static_cast<uint64_t>(rank));
  for (int call = 0; call < 3; ++call) {
    // k distinct indices among those congruent to this rank modulo P.
    std::vector<V> mine(n, V{0});
    std::vector<uint32_t> slots(n / static_cast<uint32_t>(size));
    for (uint32_t j = 0; j < slots.size(); ++j) slots[j] = j * static_cast<uint32_t>(size) + static_cast<uint32_t>(rank);
    std::shuffle(slots.begin(), slots.end(), rng);
    for (uint64_t j = 0; j < k; ++j) mine[slots[j]] = static_cast<V>(1 + rng() % 4);
    const Stream<V> selected = stream_of(mine);
    REQUIRE(on_all_ranks(!selected.is_dense() && selected.count() == k));

    const CommStats before = comm.stats();
    const Stream<V>& result = ar->allreduce(selected, k, dropped);
    const CommStats moved = comm.stats() - before;
    double busiest[2] = {static_cast<double>(moved.bytes_sent),
                         static_cast<double>(moved.bytes_sent + moved.bytes_received)};
    MPI_Allreduce(MPI_IN_PLACE, busiest, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) {
      std::printf("gtopk volume %-6s P=%d k=%llu N=%u call %d: busiest rank sent %.0f, sent+received %.0f bytes; "
                  "volume sent %.0f (sent %.3f, sent+received %.3f of it)\n",
                  sizeof(V) == 4 ? "float" : "double", size, static_cast<unsigned long long>(k), n, call, busiest[0],
                  busiest[1], volume, busiest[0] / volume, busiest[1] / volume);
      std::fflush(stdout);
    }
    CAPTURE(call, busiest[0], busiest[1], volume);
    CHECK(on_all_ranks(!result.is_dense() && result.count() == k));
    CHECK(on_all_ranks(std::abs(busiest[0] - volume) <= 0.1 * volume));
    CHECK(on_all_ranks(std::abs(busiest[1] - 2 * volume) <= 0.1 * 2 * volume));
  }
}
