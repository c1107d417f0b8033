#include "ps/model_copy.h"

#include <stdexcept>

namespace mpisgd {
namespace {

void check_written(const Weights& w, uint32_t i, float x) {
  if (w.weight(i) != static_cast<double>(x))
    throw std::logic_error("parameter server: a rank's weights must be made with no L2 and no AdaGrad");
}

}  // namespace

void assign_values(Weights& w, std::span<const uint32_t> index, std::span<const float> values,
                   std::vector<float>& scratch) {
  if (index.empty()) return;
  scratch.resize(index.size());
  for (size_t j = 0; j < index.size(); ++j) scratch[j] = static_cast<float>(w.weight(index[j]));
  w.step_sparse(1.0, index, scratch);
  for (size_t j = 0; j < index.size(); ++j) scratch[j] = -values[j];
  w.step_sparse(1.0, index, scratch);
  check_written(w, index[0], values[0]);
}

void gather_model(CountedComm& comm, const ShardMap& map, int first_server, const ShardServer* mine, Weights& w) {
  CountedComm::Timed timed(comm);
  std::vector<float> all(w.dim());
  for (int s = 0; s < map.servers(); ++s) {
    const Range shard = map.shard(s);
    const int root = first_server + s;
    if (comm.rank() == root)
      for (uint32_t i = shard.begin; i < shard.end; ++i) all[i] = mine->value(i - shard.begin);
    comm.bcast(all.data() + shard.begin, shard.length(), root);
  }
  std::vector<float> minus(w.dim());
  for (uint32_t i = 0; i < w.dim(); ++i) minus[i] = static_cast<float>(w.weight(i));
  w.step_dense(1.0, minus);
  for (uint32_t i = 0; i < w.dim(); ++i) minus[i] = -all[i];
  w.step_dense(1.0, minus);
  if (w.dim()) check_written(w, 0, all[0]);
}

}  // namespace mpisgd
