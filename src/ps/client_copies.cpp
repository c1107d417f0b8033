#include "ps/client_copies.h"

#include <cmath>

namespace mpisgd {

ClientCopies::ClientCopies(uint32_t shard_length, int workers, double drop_rate)
    : keep_(1 - drop_rate), copy_(static_cast<size_t>(workers), std::vector<float>(shard_length)),
      behind_(static_cast<size_t>(workers), IndexSet(shard_length)), fresh_(static_cast<size_t>(workers)), exact_(make_topk_selector("exact")) {}

void ClientCopies::sync(const Weights& shard) {
  for (size_t w = 0; w < copy_.size(); ++w) {
    for (uint32_t i = 0; i < shard.dim(); ++i) copy_[w][i] = static_cast<float>(shard.weight(i));
    candidate_.clear();
    behind_[w].drain(candidate_);
    fresh_[w] = 0;
  }
}

void ClientCopies::changed(std::span<const uint32_t> local) {
  for (size_t w = 0; w < behind_.size(); ++w) {
    for (uint32_t i : local) behind_[w].insert(i);
    fresh_[w] += local.size();
  }
}

void ClientCopies::answer(int worker, const Weights& shard, std::vector<uint32_t>& index, std::vector<float>& value) {
  const auto w = static_cast<size_t>(worker);
  std::vector<float>& copy = copy_[w];
  candidate_.clear();
  behind_[w].drain(candidate_);
  current_.clear();
  difference_.clear();
  size_t n = 0;
  for (uint32_t i : candidate_) {
    const auto now = static_cast<float>(shard.weight(i));
    if (now == copy[i]) continue;
    candidate_[n++] = i;
    current_.push_back(now);
    difference_.push_back(now - copy[i]);
  }
  candidate_.resize(n);
  exact_->select(difference_, static_cast<size_t>(std::ceil(keep_ * static_cast<double>(fresh_[w]))), kept_);
  fresh_[w] = 0;
  index.clear();
  value.clear();
  size_t next = 0;
  for (size_t j = 0; j < n; ++j) {
    const uint32_t i = candidate_[j];
    if (next < kept_.size() && kept_[next] == j) {
      ++next;
      copy[i] = current_[j];
      index.push_back(i);
      value.push_back(current_[j]);
    } else {
      behind_[w].insert(i);
    }
  }
}

}  // namespace mpisgd
