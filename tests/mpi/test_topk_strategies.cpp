// Top-k strategies end to end (issue 16): for every top-k strategy and the lossless ones
// with --k, and every selection method, after every step the applied updates plus all
// ranks' residuals equal the sum of all ranks' raw updates, exactly (integer values, a
// learning rate of 1 and no regularisation, so the weights are minus the applied sum).
// Every rank ends each step with the same weights.
#include <catch2/catch.hpp>

#include <random>
#include <string>
#include <vector>

#include "collectives/topk_allreduce.h"
#include "comm/counted_comm.h"
#include "mpi_test_util.h"
#include "sparse/error_feedback.h"
#include "strategies/strategy.h"
#include "tests/sparse_pairs.h"

using namespace mpisgd;
using namespace mpisgd::test;

namespace {

bool registered(const std::string& name) {
  for (const auto& s : strategy_registry())
    if (s.name == name) return true;
  return false;
}

std::vector<double> all_ranks_sum(std::vector<double> v) {
  MPI_Allreduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return v;
}

}  // namespace

TEST_CASE("top-k strategies conserve the update", "[collectives][topk-strategies]") {
  const std::string strategy =
      GENERATE("topk-ag", "topk-dsa", "gtopk", "oktopk", "gaussiank", "ssar-split-ag", "ssar-rec-dbl", "sparse-auto");
  const std::string select = GENERATE("exact", "approx", "threshold-reuse", "gaussian", "sampled");
  if (!registered(strategy) || (strategy == "gaussiank" && select != "gaussian")) return;
  DYNAMIC_SECTION(strategy << " --select " << select) {
    const uint32_t dim = 3000;
    CountedComm comm(MPI_COMM_WORLD);
    StrategyContext context{.comm = comm, .dim = dim};
    context.flags.get<SparsifyOptions>().k = 30;
    context.flags.get<SparsifyOptions>().select = select;
    context.flags.get<SparsifyOptions>().reuse_period = 3;
    context.flags.get<SparsifyOptions>().warmup_steps = 2;
    context.flags.get<TopkCollectiveConfig>().reuse_period = 3;
    context.flags.get<TopkCollectiveConfig>().repartition_period = 4;
    auto s = make_strategy(strategy, context);
    Weights w(dim, 0, false);
    std::mt19937 rng(11 + 31 * world_rank());
    std::vector<double> raw(dim, 0.0);
    bool conserved = true, same = true;
    for (int step = 0; step < 16; ++step) {
      // Some ranks have nothing in some steps, as a rank past its rows does.
      const double density = (step + world_rank()) % 5 == 0 ? 0.0 : (step % 3 ? 0.01 : 0.1);
      SparseVector local = random_update(rng, dim, density);
      for (size_t j = 0; j < local.nnz(); ++j) raw[local.index[j]] += local.value[j];
      s->exchange(paired(local), 1.0, w);

      std::vector<double> held(dim, 0.0);
      REQUIRE(s->residual() != nullptr);
      for (size_t j = 0; j < s->residual()->nnz(); ++j) held[s->residual()->index[j]] = s->residual()->value[j];
      const std::vector<double> raw_all = all_ranks_sum(raw), held_all = all_ranks_sum(held);
      for (uint32_t i = 0; i < dim; ++i) conserved = conserved && -w.weight(i) + held_all[i] == raw_all[i];
      uint64_t h = w.hash(), h0 = h;
      MPI_Bcast(&h0, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
      same = same && h == h0;
    }
    REQUIRE(on_all_ranks(conserved));
    REQUIRE(on_all_ranks(same));
  }
}

TEST_CASE("top-k settings that cannot work are refused at start", "[topk-strategies]") {
  CountedComm comm(MPI_COMM_WORLD);
  StrategyContext context{.comm = comm, .dim = 100};
  context.flags.get<SparsifyOptions>().k = 5;
  REQUIRE_THROWS_AS(make_strategy("allreduce", context), std::invalid_argument);
  context.flags.get<SparsifyOptions>().select = "exact";
  REQUIRE_THROWS_AS(make_strategy("gaussiank", context), std::invalid_argument);
  context.flags.get<SparsifyOptions>().select = "threshold-reuse";
  context.flags.get<SparsifyOptions>().reuse_period = 0;
  REQUIRE_THROWS_AS(make_strategy("topk-ag", context), std::invalid_argument);
}
