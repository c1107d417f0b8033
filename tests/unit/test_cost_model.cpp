// The cost model auto chooses by (collectives/cost_model.h): the expected size of a union
// of random index sets, the index space fitted back from a result size, and what ranks
// sharing a core add to each algorithm.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "collectives/cost_model.h"
#include "collectives/sparse_allreduce.h"

using namespace mpisgd;

namespace {

double cost_of(const std::string& name, const CostInputs& in) {
  for (const auto& info : sparse_allreduce_registry<float>())
    if (info.name == name) return info.cost(CostModel(in));
  FAIL("no algorithm " << name);
  return 0;
}

// Shared memory of a 2-core machine, as auto measured it there at 8 ranks.
CostInputs shared_memory(int ranks, double k) {
  CostInputs in;
  in.ranks = ranks;
  in.dim = 3200000;
  in.universe = 3200000;
  in.k = k;
  in.dense_switch = DenseSwitch{0.12};
  in.network = AlphaBeta{7.5e-6, 3.8e-10, 2.9e-6};
  in.compute = SummationSpeed{5.9e-9, 0.42e-9};
  return in;
}

}  // namespace

TEST_CASE("cost model: the expected union of random index sets", "[cost_model]") {
  CHECK(expected_union(100, 1e6, 1) == Approx(100));
  CHECK(expected_union(0, 1e6, 8) == 0);
  CHECK(expected_union(2e6, 1e6, 3) == 1e6);  // a set as large as the space fills it
  // Nearly disjoint in a huge space, and never more than the space.
  CHECK(expected_union(100, 1e12, 8) == Approx(800).epsilon(1e-6));
  CHECK(expected_union(5e5, 1e6, 8) == Approx(1e6 * (1 - std::pow(0.5, 8))));
}

TEST_CASE("cost model: the fitted index space reproduces the observed result", "[cost_model]") {
  for (double result : {1500.0, 4000.0, 7900.0}) {
    const double m = fit_universe(1000, result, 8, 1e6);
    CHECK(expected_union(1000, m, 8) == Approx(result).epsilon(1e-3));
  }
  CHECK(fit_universe(1000, 1000, 8, 1e6) == 1000);  // identical sets: the space is k
  CHECK(fit_universe(0, 0, 8, 1e6) == 1e6);         // nothing seen: uniform over N
}

TEST_CASE("cost model: ranks sharing a core slow recursive doubling's sums only", "[cost_model]") {
  CostInputs alone = shared_memory(8, 320);
  CostInputs shared = alone;
  shared.core_sharing = 4;
  // Every rank merges between the stages at the same moment, four to a core: a stage
  // waits three more merges, less what its transfer hides. The stages send and merge
  // 320, 640 and 1280 items.
  double waiting = 0;
  for (double items : {320.0, 640.0, 1280.0}) {
    const double bytes = Stream<float>::kHeaderBytes + items * 8;
    waiting += 3 * 2 * items * alone.compute.merge_item_s - bytes * alone.network.beta;
  }
  CHECK(cost_of("ssar-rec-dbl", shared) - cost_of("ssar-rec-dbl", alone) == Approx(waiting).epsilon(0.02));
  // The Split phase sums parts as they arrive, between the other ranks' messages.
  for (const char* name : {"ssar-split-ag", "dsar-split-ag", "dsar-early", "dense"})
    CHECK(cost_of(name, shared) == cost_of(name, alone));
  // Measured at this point (8 ranks on 2 cores, N = 3.2M, 320 items per rank):
  // ssar-split-ag 0.09-0.10 ms, ssar-rec-dbl 0.12-0.17 ms.
  CHECK(cost_of("ssar-rec-dbl", alone) < cost_of("ssar-split-ag", alone));
  CHECK(cost_of("ssar-split-ag", shared) < cost_of("ssar-rec-dbl", shared));

  // Over a 1 Gbit/s link the transfers hide the merges: no change.
  for (CostInputs* in : {&alone, &shared}) {
    in->k = 32000;
    in->network = AlphaBeta{5e-5, 8e-9, 2e-5};
  }
  CHECK(cost_of("ssar-rec-dbl", shared) == cost_of("ssar-rec-dbl", alone));
}

TEST_CASE("cost model: dense-rec-halving is Rabenseifner's cost, plus the fold's two messages", "[cost_model]") {
  CostInputs in = shared_memory(8, 320);
  const double alpha = in.network.alpha, n = 3200000;
  const double beta = in.network.beta * sizeof(float), gamma = in.compute.dense_element_s;
  // 2 log2(P) alpha + 2 (P-1)/P N beta + (P-1)/P N gamma, whatever the density.
  CHECK(cost_of("dense-rec-halving", in) == Approx(6 * alpha + 2 * 7.0 / 8 * n * beta + 7.0 / 8 * n * gamma));
  in.k = 3200000;
  CHECK(cost_of("dense-rec-halving", in) == Approx(6 * alpha + 2 * 7.0 / 8 * n * beta + 7.0 / 8 * n * gamma));
  // 12 ranks: 4 fold in (a dense stream of N to a partner, summed there) and get the
  // result back, then 8.
  in.ranks = 12;
  const double fold = alpha + (n * sizeof(float) + Stream<float>::kHeaderBytes) * in.network.beta;
  CHECK(cost_of("dense-rec-halving", in) ==
        Approx(2 * fold + n * gamma + 6 * alpha + 2 * 7.0 / 8 * n * beta + 7.0 / 8 * n * gamma));
  in.ranks = 1;
  CHECK(cost_of("dense-rec-halving", in) == 0);
}

TEST_CASE("cost model: runs are packed where the bytes they save take longer than packing", "[cost_model]") {
  const SummationSpeed merge{4e-9, 1e-9};  // a merge item as measured on 2 cores
  const AlphaBeta shared_memory{1e-6, 0.07e-9}, ten_gbit{20e-6, 0.8e-9}, one_gbit{50e-6, 8e-9};
  // Saved bytes a pair: 4 - 8/K; packing costs half a merge item (2 ns here).
  CHECK_FALSE(pack_runs_pay(shared_memory, merge, 10));
  CHECK_FALSE(pack_runs_pay(one_gbit, merge, 1));  // binary models have no runs to pack
  CHECK_FALSE(pack_runs_pay(one_gbit, merge, 2));  // runs of 2 save nothing
  CHECK(pack_runs_pay(one_gbit, merge, 3));        // 1.33 bytes at 8 ns
  CHECK_FALSE(pack_runs_pay(ten_gbit, merge, 3));  // 1.33 bytes at 0.8 ns: 1.07 ns
  CHECK(pack_runs_pay(ten_gbit, merge, 10));       // 3.2 bytes at 0.8 ns: 2.56 ns
}

TEST_CASE("cost model: packed runs price a sparse item at its value and a share of its run's head", "[cost_model]") {
  CHECK(wire_item_bytes(4, 1) == 8);
  CHECK(wire_item_bytes(4, 2) == 8);  // runs of 2 are no smaller: sent as pairs
  CHECK(wire_item_bytes(4, 3) == Approx(4 + 8.0 / 3));
  CHECK(wire_item_bytes(4, 10) == Approx(4.8));
  CHECK(wire_item_bytes(8, 10) == Approx(8.8));

  CostInputs in = shared_memory(8, 32000);
  in.network = AlphaBeta{50e-6, 8e-9};  // 1 Gbit/s
  const double items = 32000, length = 3200000;
  const double pairs = CostModel(in).transfer(items, length);
  in.run_columns = 10;
  CHECK(pairs == Approx(in.network.beta * (Stream<float>::kHeaderBytes + items * 8)));
  CHECK(CostModel(in).transfer(items, length) == Approx(in.network.beta * (Stream<float>::kHeaderBytes + items * 4.8)));
  // A stream gone dense crosses as it is, packed or not.
  CHECK(CostModel(in).transfer(length, length) ==
        Approx(in.network.beta * (Stream<float>::kHeaderBytes + length * 4)));
  // Cheaper sparse bytes move the tuned dense switch up on a slow link.
  const SummationSpeed merge{4e-9, 1e-9};
  CHECK(network_dense_switch(in.network, merge, 4, 10).density > network_dense_switch(in.network, merge, 4).density);
}

TEST_CASE("cost model: ssar-shm moves ssar-split-ag's bytes, without the fold", "[cost_model]") {
  for (int p : {2, 3, 4, 6, 8, 16}) {
    CAPTURE(p);
    CostInputs bytes = shared_memory(p, 20000);
    bytes.network = AlphaBeta{0, 1};
    bytes.compute = SummationSpeed{0, 0};
    bytes.mean_volume = true;
    // The same parts and sums cross, read from a slot instead of sent; only the streams'
    // 8-byte headers differ in number. Where P is not a power of two, split-allgather
    // folds the extra ranks' sums in and the result out; every slot is read directly.
    const double shm = cost_of("ssar-shm", bytes), split_ag = cost_of("ssar-split-ag", bytes);
    if ((p & (p - 1)) == 0) {
      CHECK(shm == Approx(split_ag).epsilon(0.001));
    } else {
      CHECK(shm < 0.95 * split_ag);
    }
  }
  // Every rank sums between the two barriers, so ranks that share a core sum in turn.
  CostInputs alone = shared_memory(8, 20000), shared = alone;
  shared.core_sharing = 4;
  CHECK(cost_of("ssar-shm", shared) > cost_of("ssar-shm", alone));
}
