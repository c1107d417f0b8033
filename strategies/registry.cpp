#include "strategies/strategy.h"

#include <algorithm>

#include "collectives/sparse_allreduce.h"
#include "collectives/topk_allreduce.h"
#include "comm/find_by_name.h"

namespace mpisgd {

// One declaration and one entry per strategy; each lives in a file of its own, with its
// family (strategy.h: its flags, their checks, which ranks train).
const StrategyFamily& dense_family();
const StrategyFamily& lossless_sparse_family();
const StrategyFamily& topk_family();
const StrategyFamily& parameter_server_family();
const StrategyFamily& local_sgd_family();
std::unique_ptr<Strategy> make_dense_allreduce(const StrategyContext&);
std::unique_ptr<Strategy> make_lossless_sparse(const StrategyContext&, const std::string& algorithm);
std::unique_ptr<Strategy> make_topk_feedback(const StrategyContext&, const std::string& algorithm);
std::unique_ptr<Strategy> make_gaussiank(const StrategyContext&);
std::unique_ptr<Strategy> make_ps_sync(const StrategyContext&);
std::unique_ptr<Strategy> make_ps_async(const StrategyContext&);
std::unique_ptr<Strategy> make_local_sgd(const StrategyContext&);

// The lossless sparse strategies differ only in the collective (src/collectives/).
template <const char* Algorithm>
std::unique_ptr<Strategy> make_sparse(const StrategyContext& c) {
  return make_lossless_sparse(c, Algorithm);
}
constexpr char kRecDbl[] = "ssar-rec-dbl", kSplitAg[] = "ssar-split-ag", kShm[] = "ssar-shm",
               kDsarSplitAg[] = "dsar-split-ag", kDsarEarly[] = "dsar-early", kAuto[] = "auto";

// The top-k strategies differ only in the top-k collective (src/collectives/topk_*.cpp).
template <const char* Algorithm>
std::unique_ptr<Strategy> make_topk(const StrategyContext& c) {
  return make_topk_feedback(c, Algorithm);
}
constexpr char kTopkAg[] = "topk-ag", kTopkDsa[] = "topk-dsa", kGtopk[] = "gtopk", kOktopk[] = "oktopk";

const std::vector<StrategyInfo>& strategy_registry() {
  const StrategyFamily& dense = dense_family();
  const StrategyFamily& sparse = lossless_sparse_family();
  const StrategyFamily& topk = topk_family();
  const StrategyFamily& ps = parameter_server_family();
  const StrategyFamily& local = local_sgd_family();
  static const std::vector<StrategyInfo> registry = {
      {"allreduce", "dense MPI_Allreduce of the whole update vector (the baseline)", dense, make_dense_allreduce, true},
      {"ssar-rec-dbl", "sparse update, SSAR recursive doubling", sparse, make_sparse<kRecDbl>, true},
      {"ssar-split-ag", "sparse update, SSAR split + sparse allgather", sparse, make_sparse<kSplitAg>, true},
      {"ssar-shm", "sparse update, ssar-split-ag's sums through one node's shared memory", sparse, make_sparse<kShm>,
       true},
      {"dsar-split-ag", "sparse update, DSAR split + dense allgather", sparse, make_sparse<kDsarSplitAg>, true},
      {"dsar-early", "sparse update, DSAR going dense inside groups of --group-size", sparse, make_sparse<kDsarEarly>,
       true},
      {"sparse-auto", "sparse update, the collective an alpha-beta model picks per step", sparse, make_sparse<kAuto>,
       true},
      {"topk-ag", "top-k update with error feedback, TopkA: allgather of k pairs", topk, make_topk<kTopkAg>},
      {"topk-dsa", "top-k update with error feedback, TopkDSA: split + allgather, dense on fill-in", topk,
       make_topk<kTopkDsa>},
      {"gtopk", "top-k update with error feedback, gTop-k: tree of top-k merges, broadcast", topk, make_topk<kGtopk>},
      {"gaussiank", "top-k update with error feedback, Gaussiank: gaussian threshold, allgather", topk,
       make_gaussiank},
      {"oktopk", "top-k update with error feedback, Ok-Topk: balanced split-reduce, global top-k, allgather", topk,
       make_topk<kOktopk>},
      {"ps-sync", "parameter servers on the last --servers ranks, steps summed in worker order", ps, make_ps_sync},
      {"ps-async", "parameter servers applying each push as it comes (--max-staleness bounds the lag)", ps,
       make_ps_async},
      {"local-sgd", "each rank steps alone, the models averaged every --sync-every steps (sparse allreduce)", local,
       make_local_sgd},
  };
  return registry;
}

std::vector<const StrategyFamily*> strategy_families() {
  std::vector<const StrategyFamily*> families;
  for (const StrategyInfo& s : strategy_registry())
    if (std::find(families.begin(), families.end(), &s.family) == families.end()) families.push_back(&s.family);
  return families;
}

std::string strategies_of(const StrategyFamily& family) {
  std::vector<std::string> names;
  for (const StrategyInfo& s : strategy_registry())
    if (&s.family == &family) names.push_back(s.name);
  std::string out;
  for (size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return out;
}

const StrategyInfo& find_strategy(const std::string& name) {
  return find_by_name(strategy_registry(), name, "strategy");
}

void check_strategy(const std::string& name, const StrategyFlags& flags, int ranks) {
  const StrategyFamily& own = find_strategy(name).family;
  for (const StrategyFamily* family : strategy_families()) family->check(name, family == &own, flags, ranks);
}

std::unique_ptr<Strategy> make_strategy(const std::string& name, const StrategyContext& context) {
  check_strategy(name, context.flags, context.comm.size());
  // Every collective a strategy makes learns the model's columns, whose updates it then
  // packs into runs as they cross.
  StrategyContext c = context;
  auto& collective = c.flags.get<CollectiveConfig>();
  auto& topk = c.flags.get<TopkCollectiveConfig>();
  collective.columns = topk.columns = c.columns;
  topk.pack_runs = collective.pack_runs.value_or(true);
  return find_strategy(name).make(c);
}

}  // namespace mpisgd
