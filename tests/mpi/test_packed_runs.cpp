// Updates of a K-column model crossing packed into runs (collective_util.h, StreamWire):
// every lossless and top-k collective returns the same bits packed as unpacked, call
// after call, and sends no more bytes; the sparse ones send fewer. gTop-k and Ok-Topk,
// whose global selections then keep whole features (sparse/feature_select.h), lose
// nothing, gTop-k keeps at most K - 1 values past k, and Ok-Topk's result is whole
// features. Inputs are K-class
// updates (every slot of a touched feature, runs of K) and scattered slots (runs of one,
// which cross as pairs). Values are small integers, so sums are exact in any order.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "collectives/sparse_allreduce.h"
#include "collectives/topk_allreduce.h"
#include "mpi_test_util.h"
#include "sparse/sample.h"
#include "sparse/stream_sum.h"

using namespace mpisgd;
using namespace mpisgd::test;

namespace {

constexpr uint32_t kColumns = 3;
constexpr uint32_t kFeatures = 20000;
constexpr uint32_t kDim = kFeatures * kColumns;

// This rank's update: `features` random features with all K slots (whole == true), or as
// many random single slots; values non-zero integers in [-4, 4].
template <class V>
Stream<V> update(uint64_t seed, uint64_t features, bool whole) {
  std::mt19937_64 rng(seed * 7919 + static_cast<uint64_t>(world_rank()) + 1);
  std::vector<uint32_t> index;
  if (whole) {
    for (uint32_t f : distinct_indices(kFeatures, features, rng))
      for (uint32_t c = 0; c < kColumns; ++c) index.push_back(f * kColumns + c);
  } else {
    index = distinct_indices(kDim, features, rng);
  }
  std::uniform_int_distribution<int> v(1, 4);
  std::vector<V> value;
  for (size_t j = 0; j < index.size(); ++j) value.push_back(static_cast<V>((rng() % 2 ? 1 : -1) * v(rng)));
  Stream<V> s(kDim);
  encode<V>(index, value, {0, kDim}, DenseSwitch{}, s);
  return s;
}

// The sum over all ranks.
uint64_t total(uint64_t mine) {
  MPI_Allreduce(MPI_IN_PLACE, &mine, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
  return mine;
}

template <class V>
bool same_bits(const Stream<V>& a, const Stream<V>& b) {
  return a.bytes() == b.bytes() && std::memcmp(a.data(), b.data(), a.bytes()) == 0;
}

template <class V>
std::vector<double> dense(const Stream<V>& s) {
  std::vector<double> d(kDim, 0.0);
  for (const Pair<V>& p : s.pairs()) d[p.index] = p.value;
  for (size_t i = 0; i < s.values().size(); ++i) d[i] = s.values()[i];
  return d;
}

template <class V>
uint64_t nonzeros_in(const Stream<V>& s) {
  const auto d = dense(s);
  return static_cast<uint64_t>(std::count_if(d.begin(), d.end(), [](double x) { return x != 0; }));
}

// A sparse stream's indices come in whole features (all K slots), or it is dense.
template <class V>
bool whole_features(const Stream<V>& s) {
  const auto pairs = s.pairs();
  if (pairs.size() % kColumns != 0) return false;
  for (size_t j = 0; j < pairs.size(); j += kColumns)
    for (uint32_t c = 0; c < kColumns; ++c)
      if (pairs[j + c].index != pairs[j].index - pairs[j].index % kColumns + c) return false;
  return true;
}

// Sum over ranks of `selected` == `result` + sum over ranks of `dropped` (exact: integers).
template <class V>
bool conserved(const Stream<V>& selected, const Stream<V>& result, const Stream<V>& dropped) {
  auto kept = dense(selected);
  const auto left = dense(dropped);
  for (uint32_t i = 0; i < kDim; ++i) kept[i] -= left[i];
  MPI_Allreduce(MPI_IN_PLACE, kept.data(), static_cast<int>(kDim), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return kept == dense(result);
}

CollectiveConfig lossless_config(bool packed) {
  static const MachineSpeed speed = measure_machine_speed(CountedComm(MPI_COMM_WORLD));
  CollectiveConfig config;
  config.measured = speed;
  config.columns = packed ? kColumns : 1;
  config.pack_runs = packed;
  return config;
}

}  // namespace

TEMPLATE_TEST_CASE("packed runs: every lossless collective gives the same bits and sends no more", "[packed_runs]",
                   float, double) {
  using V = TestType;
  CountedComm comm(MPI_COMM_WORLD);
  const bool many = world_size() > 1;
  for (const auto& info : sparse_allreduce_registry<V>()) {
    auto plain = info.make(comm, kDim, lossless_config(false));
    auto packed = info.make(comm, kDim, lossless_config(true));
    uint64_t seed = 1;
    for (bool whole : {true, false}) {
      for (uint64_t features : {0, 1, 40, 400, 4000}) {
        const Stream<V> input = update<V>(seed++, features, whole);
        INFO(info.name << ", " << (whole ? "whole features" : "single slots") << ", " << features << ", P "
                       << world_size());
        const CommStats before = comm.stats();
        const Stream<V>& a = plain->allreduce(input);
        const CommStats middle = comm.stats();
        const Stream<V>& b = packed->allreduce(input);
        const CommStats after = comm.stats();
        const uint64_t plain_bytes = (middle - before).bytes_sent, packed_bytes = (after - middle).bytes_sent;
        CAPTURE(plain_bytes, packed_bytes);
        CHECK(on_all_ranks(same_bits(a, b)));
        // auto may time its candidates differently for the two objects.
        if (info.name == "auto") continue;
        CHECK(on_all_ranks(packed_bytes <= plain_bytes));
        // Sparse inputs (below 4000 features, 20% of the slots) of runs: the sparse
        // algorithms send fewer bytes in all (a rank the fold leaves out may send its
        // input dense). One that reads its streams from a shared window sends no
        // message, so it has nothing to pack.
        const bool sparse_algorithm = info.name.rfind("ssar", 0) == 0 || info.name.rfind("dsar", 0) == 0;
        if (many && whole && features >= 40 && features < 4000 && sparse_algorithm && !info.shared_bytes)
          CHECK(total(packed_bytes) < total(plain_bytes));
      }
    }
  }
}

TEMPLATE_TEST_CASE("packed runs: every top-k collective gives the same bits and drops the same", "[packed_runs]",
                   float, double) {
  using V = TestType;
  CountedComm comm(MPI_COMM_WORLD);
  const bool many = world_size() > 1;
  TopkCollectiveConfig plain_config, packed_config;
  plain_config.repartition_period = packed_config.repartition_period = 3;
  plain_config.reuse_period = packed_config.reuse_period = 2;
  packed_config.columns = kColumns;
  for (const auto& info : topk_allreduce_registry<V>()) {
    auto plain = info.make(comm, kDim, plain_config);
    auto packed = info.make(comm, kDim, packed_config);
    Stream<V> dropped_plain(kDim), dropped_packed(kDim);
    uint64_t seed = 100;
    for (bool whole : {true, false}) {
      for (uint64_t features : {0, 1, 40, 400, 400, 400}) {
        const Stream<V> selected = update<V>(seed++, features, whole);
        const uint64_t k = features * (whole ? kColumns : 1) / 2;
        INFO(info.name << ", " << (whole ? "whole features" : "single slots") << ", " << features << ", P "
                       << world_size());
        const CommStats before = comm.stats();
        const Stream<V>& a = plain->allreduce(selected, k, dropped_plain);
        const CommStats middle = comm.stats();
        const Stream<V>& b = packed->allreduce(selected, k, dropped_packed);
        const CommStats after = comm.stats();
        const uint64_t plain_bytes = (middle - before).bytes_sent, packed_bytes = (after - middle).bytes_sent;
        CAPTURE(plain_bytes, packed_bytes);
        if (info.name == "gtopk") {
          // Its merges keep whole features by their norm, ceil(k / K) of them where more
          // than k values meet: at most K - 1 values past k, and still nothing lost.
          CHECK(on_all_ranks(nonzeros_in(b) <= k + kColumns - 1));
          CHECK(on_all_ranks(conserved(selected, b, dropped_packed)));
        } else if (info.name == "oktopk") {
          // Its global threshold ranks features by their norm and keeps them whole.
          if (whole) CHECK(on_all_ranks(whole_features(b)));
          CHECK(on_all_ranks(conserved(selected, b, dropped_packed)));
        } else {
          CHECK(on_all_ranks(same_bits(a, b)));
          CHECK(on_all_ranks(same_bits(dropped_plain, dropped_packed)));
        }
        // A packed allgather's blocks carry a stream header each (8 bytes from every other
        // rank), and Ok-Topk's adds an exchange of the blocks' sizes (an int each).
        // (gTop-k's and Ok-Topk's whole features may hold more values than single ones.)
        const uint64_t headers = 12 * static_cast<uint64_t>(world_size() - 1);
        if (info.name != "gtopk" && info.name != "oktopk") CHECK(on_all_ranks(packed_bytes <= plain_bytes + headers));
        if (many && whole && features >= 40) CHECK(total(packed_bytes) < total(plain_bytes));
      }
    }
  }
}
