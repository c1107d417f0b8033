#include "model/weights.h"

#include <atomic>
#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>

#include "comm/state_blob.h"

namespace mpisgd {

namespace {
// Below this many entries a step is quicker than waking the other threads.
constexpr ptrdiff_t kParallelStep = 8192;
}

Weights::Weights(uint32_t dim, double l2, bool adagrad, int threads, float adagrad_start)
    : slots_(dim), threads_(threads) {
  step_.l2 = l2;
  if (adagrad) adagrad_.assign(dim, adagrad_start);
  restamp();
}

void Weights::restamp() {
  static std::atomic<uint64_t> next{1};
  stamp_ = next.fetch_add(1, std::memory_order_relaxed);
}

double Weights::dot_known(std::span<const uint32_t> index, std::span<const float> value) const {
  double s = 0;
  for (size_t j = 0; j < index.size() && index[j] < slots_.size(); ++j)
    s += static_cast<double>(slots_[index[j]].v) * value[j];
  return s * step_.scale;
}

void Weights::margins_known(std::span<const uint32_t> index, std::span<const float> value,
                            std::span<double> m) const {
  if (m.size() == 1) {
    m[0] = dot_known(index, value);
    return;
  }
  const size_t features = slots_.size() / m.size();
  size_t known = 0;
  while (known < index.size() && index[known] < features) ++known;
  margins(index.first(known), value.first(known), m);
}

// Every step (step_sparse, step_pairs, step_dense, step_scratch) begins here.
void Weights::begin_step(double eta) {
  restamp();
  step_.begin(eta);
}

void Weights::end_step() {
  if (!step_.needs_renormalising()) return;
  for (Slot& x : slots_) x.v = static_cast<float>(x.v * step_.scale);
  for (float& b : base_) b = static_cast<float>(b * step_.scale);
  step_.scale = 1;
}

void Weights::mark_base() {
  if (!adagrad_.empty()) throw std::invalid_argument("model averaging does not average Adagrad's sums");
  base_.resize(slots_.size());
  for (size_t i = 0; i < slots_.size(); ++i) base_[i] = slots_[i].v;
}

void Weights::write_changes(std::span<const uint32_t> moved, Stream<float>& out) const {
  uint32_t n = 0;
  out.reserve_pairs(moved.size());
  Pair<float>* pairs = out.pairs().data();
  for (uint32_t i : moved)
    if (slots_[i].v != base_[i]) pairs[n++] = {i, slots_[i].v - base_[i]};
  out.set_sparse(n);
}

void Weights::take_mean_change(const Stream<float>& own, const Stream<float>& sum, int ranks) {
  restamp();
  // One ascending walk over both streams, so that each index's slot is visited once (the
  // walk is most of an average's cost: two random reads a changed feature). An index this
  // rank changed whose changes summed to exactly zero may carry no pair in the sum; it
  // must still go back to its base.
  const std::span<const Pair<float>> mine = own.pairs();
  size_t j = 0;
  auto back_to_base_below = [&](uint32_t end) {
    for (; j < mine.size() && mine[j].index < end; ++j) slots_[mine[j].index].v = base_[mine[j].index];
  };
  auto take = [&](uint32_t i, float s) {
    back_to_base_below(i);
    if (j < mine.size() && mine[j].index == i) ++j;
    slots_[i].v = static_cast<float>(base_[i] + static_cast<double>(s) / ranks);
    base_[i] = slots_[i].v;
  };
  if (sum.is_dense()) {
    for (uint32_t i = 0; i < sum.count(); ++i)
      if (sum.values()[i] != 0) take(i, sum.values()[i]);
  } else {
    for (const Pair<float>& p : sum.pairs()) take(p.index, p.value);
  }
  back_to_base_below(std::numeric_limits<uint32_t>::max());  // indices stay below N <= 2^32 - 1
}

void Weights::step_sparse(double eta, std::span<const uint32_t> index, std::span<const float> g) {
  begin_step(eta);
  const auto n = static_cast<ptrdiff_t>(index.size());
#pragma omp parallel for num_threads(threads_) if (threads_ > 1 && n >= kParallelStep) schedule(static)
  for (ptrdiff_t j = 0; j < n; ++j) update(index[j], g[j]);
  end_step();
}

void Weights::step_pairs(double eta, std::span<const Pair<float>> g) {
  begin_step(eta);
  const auto n = static_cast<ptrdiff_t>(g.size());
#pragma omp parallel for num_threads(threads_) if (threads_ > 1 && n >= kParallelStep) schedule(static)
  for (ptrdiff_t j = 0; j < n; ++j) update(g[j].index, g[j].value);
  end_step();
}

uint64_t Weights::step_dense(double eta, std::span<const float> g) {
  begin_step(eta);
  uint64_t nnz = 0;
  const auto n = static_cast<ptrdiff_t>(g.size());
  if (adagrad_.empty()) {
    // Without a branch: a zero of g leaves v's bits as they are (v is never -0), and a
    // sum a few percent dense made the branch a coin toss, 2 ns a value.
#pragma omp parallel for num_threads(threads_) if (threads_ > 1 && n >= kParallelStep) schedule(static) reduction(+ : nnz)
    for (ptrdiff_t i = 0; i < n; ++i) {
      slots_[static_cast<size_t>(i)].v -= static_cast<float>(step_.coef * g[i]);
      nnz += g[i] != 0;
    }
  } else {
#pragma omp parallel for num_threads(threads_) if (threads_ > 1 && n >= kParallelStep) schedule(static) reduction(+ : nnz)
    for (ptrdiff_t i = 0; i < n; ++i) {
      if (g[i] == 0) continue;
      update(static_cast<uint32_t>(i), g[i]);
      ++nnz;
    }
  }
  end_step();
  return nnz;
}

std::vector<double> Weights::values() const {
  std::vector<double> w(slots_.size());
  for (size_t i = 0; i < slots_.size(); ++i) w[i] = step_.scale * slots_[i].v;
  return w;
}

uint64_t Weights::hash() const {
  uint64_t h = std::bit_cast<uint64_t>(step_.scale);
  auto mix = [&h](uint32_t x) { h = (h ^ x) * 0x100000001B3ull; };
  for (const Slot& x : slots_) mix(std::bit_cast<uint32_t>(x.v));
  for (float x : adagrad_) mix(std::bit_cast<uint32_t>(x));
  return h;
}

void Weights::copy_out(std::span<float> v, std::span<float> sum_sq) const {
  if (v.size() != slots_.size() || sum_sq.size() != adagrad_.size())
    throw std::invalid_argument("Weights::copy_out: spans of another size than the model's state");
  const auto n = static_cast<ptrdiff_t>(slots_.size());
  const bool sums = !adagrad_.empty();
  // Once an epoch for a model that may be many megabytes: one core alone spent longer
  // on this than the device on the epoch's batches.
#pragma omp parallel for num_threads(threads_) if (threads_ > 1 && n >= kParallelStep) schedule(static)
  for (ptrdiff_t i = 0; i < n; ++i) {
    const auto j = static_cast<size_t>(i);
    v[j] = slots_[j].v;
    if (sums) sum_sq[j] = adagrad_[j];
  }
}

void Weights::copy_in(std::span<const float> v, std::span<const float> sum_sq, const StepScale& step) {
  if (v.size() != slots_.size() || sum_sq.size() != adagrad_.size())
    throw std::invalid_argument("Weights::copy_in: spans of another size than the model's state");
  const auto n = static_cast<ptrdiff_t>(slots_.size());
  const bool sums = !adagrad_.empty();
#pragma omp parallel for num_threads(threads_) if (threads_ > 1 && n >= kParallelStep) schedule(static)
  for (ptrdiff_t i = 0; i < n; ++i) {
    const auto j = static_cast<size_t>(i);
    slots_[j].v = v[j];
    if (sums) adagrad_[j] = sum_sq[j];
  }
  step_ = step;
  restamp();
}

void Weights::save_state(StateWriter& out) const {
  out.put(step_.scale);
  out.reserve_more(sizeof(double) + 2 * sizeof(uint64_t) + (slots_.size() + adagrad_.size()) * sizeof(float));
  out.put<uint64_t>(slots_.size());
  for (const Slot& x : slots_) out.put(x.v);  // scratch is zero between steps
  out.put_vector(adagrad_);
}

void Weights::load_state(StateReader& in) {
  const auto scale = in.get<double>();
  const std::vector<float> v = in.get_vector<float>();
  if (v.size() != slots_.size()) throw std::runtime_error("checkpoint model has another number of features");
  for (size_t i = 0; i < v.size(); ++i) slots_[i] = Slot{v[i], 0.0f};
  std::vector<float> adagrad = in.get_vector<float>();
  if (adagrad.size() != adagrad_.size())
    throw std::runtime_error("checkpoint model has another learning-rate schedule");
  adagrad_ = std::move(adagrad);
  step_.scale = scale;
  restamp();
}

}  // namespace mpisgd
