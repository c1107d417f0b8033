#include "strategies/strategy.h"

#include "comm/find_by_name.h"

namespace mpisgd {

// One declaration and one entry per strategy; each lives in a file of its own.
std::unique_ptr<Strategy> make_dense_allreduce(const StrategyContext&);
std::unique_ptr<Strategy> make_lossless_sparse(const StrategyContext&, const std::string& algorithm);
std::unique_ptr<Strategy> make_topk_feedback(const StrategyContext&, const std::string& algorithm);
std::unique_ptr<Strategy> make_gaussiank(const StrategyContext&);
std::unique_ptr<Strategy> make_ps_sync(const StrategyContext&);
std::unique_ptr<Strategy> make_ps_async(const StrategyContext&);

// The lossless sparse strategies differ only in the collective (src/collectives/).
template <const char* Algorithm>
std::unique_ptr<Strategy> make_sparse(const StrategyContext& c) {
  return make_lossless_sparse(c, Algorithm);
}
constexpr char kRecDbl[] = "ssar-rec-dbl", kSplitAg[] = "ssar-split-ag", kDsarSplitAg[] = "dsar-split-ag",
               kDsarEarly[] = "dsar-early", kAuto[] = "auto";

// The top-k strategies differ only in the top-k collective (src/collectives/topk_*.cpp).
template <const char* Algorithm>
std::unique_ptr<Strategy> make_topk(const StrategyContext& c) {
  return make_topk_feedback(c, Algorithm);
}
constexpr char kTopkAg[] = "topk-ag", kTopkDsa[] = "topk-dsa", kGtopk[] = "gtopk", kOktopk[] = "oktopk";

const std::vector<StrategyInfo>& strategy_registry() {
  static const std::vector<StrategyInfo> registry = {
      {"allreduce", "dense MPI_Allreduce of the whole update vector (the baseline)", make_dense_allreduce, true},
      {"ssar-rec-dbl", "sparse update, SSAR recursive doubling", make_sparse<kRecDbl>, true},
      {"ssar-split-ag", "sparse update, SSAR split + sparse allgather", make_sparse<kSplitAg>, true},
      {"dsar-split-ag", "sparse update, DSAR split + dense allgather", make_sparse<kDsarSplitAg>, true},
      {"dsar-early", "sparse update, DSAR going dense inside groups of --group-size", make_sparse<kDsarEarly>, true},
      {"sparse-auto", "sparse update, the collective an alpha-beta model picks per step", make_sparse<kAuto>, true},
      {"topk-ag", "top-k update with error feedback, TopkA: allgather of k pairs", make_topk<kTopkAg>},
      {"topk-dsa", "top-k update with error feedback, TopkDSA: split + allgather, dense on fill-in",
       make_topk<kTopkDsa>},
      {"gtopk", "top-k update with error feedback, gTop-k: tree of top-k merges, broadcast", make_topk<kGtopk>},
      {"gaussiank", "top-k update with error feedback, Gaussiank: gaussian threshold, allgather", make_gaussiank},
      {"oktopk", "top-k update with error feedback, Ok-Topk: balanced split-reduce, global top-k, allgather",
       make_topk<kOktopk>},
      {"ps-sync", "parameter servers on the last --servers ranks, steps summed in worker order", make_ps_sync},
      {"ps-async", "parameter servers applying each push as it comes (--max-staleness bounds the lag)", make_ps_async},
  };
  return registry;
}

std::unique_ptr<Strategy> make_strategy(const std::string& name, const StrategyContext& context) {
  return find_by_name(strategy_registry(), name, "strategy").make(context);
}

}  // namespace mpisgd
