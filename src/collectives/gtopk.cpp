// gTop-k (Shi et al., "A Distributed Synchronous SGD Algorithm with Global Top-k
// Sparsification for Low Bandwidth Networks", ICDCS'19, section III-C, Algorithms 3-4): a
// binomial reduction tree towards rank 0 whose every merge keeps only the k largest |values|
// of the sum of its two sparse vectors (Definition 1), then a binomial broadcast of the
// global top k. Cost (the paper's Table I, the Ok-Topk paper's Table 1):
//   2 log2(P) alpha + 4 k log2(P) beta   (words; k pairs are 2k words)
// which is rank 0's traffic both ways: it receives k pairs in each of the log2 P reduction
// rounds and sends them in each of the log2 P broadcast rounds. No rank sends more than
// log2 P messages of k pairs, half of that figure. Non-powers of two fold the extra ranks in
// before and out after (one more message of k pairs each way).
//
// Deviation from the paper, on purpose. Algorithm 4 (line 10) puts a rank's own value back
// into its residual when its index is missing from the global top k. That loses mass when
// the value was dropped at one merge while the same index survived through another subtree:
// the result holds only the other subtree's part, and the dropped part returns nowhere.
// Here the rank that performs a merge keeps everything that merge left out (partial sums of
// the ranks below it) in its own `dropped`; leaves that sent everything keep nothing. Every
// merge conserves its sum (a + b = kept + left out), so
//   sum over ranks of `selected` == result + sum over ranks of `dropped`
// exactly. A rank's own input is cut to its top k first, so the result never holds more
// than k non-zeros. A merge of at most k non-zeros drops nothing: with k at least the size
// of the union of all inputs, the result is the exact sum.
//
// With K columns (a K-class model's update, sparse/feature_select.h) a merge ranks features
// by the norm of their K values and keeps ceil(k / K) whole features, so a feature's values
// never part and the messages stay runs of K indices; the result may then hold up to K - 1
// values more than k.
//
// Ties in |value| go to the lower index, and the tree is fixed by rank, so the result is
// deterministic and, being broadcast, identical on every rank. The selection is the exact
// selector of sparse/topk_select.h, which orders floats: doubles are ranked by their float
// rounding (exact for the trainer's float updates).
#include <cmath>
#include <memory>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

#include "collectives/collective_util.h"
#include "collectives/topk_allreduce.h"
#include "sparse/feature_select.h"
#include "sparse/stream_sum.h"
#include "sparse/topk_select.h"

namespace mpisgd {
namespace {

// A sparse vector as two arrays: indices ascending, no zero values.
template <class V>
struct Entries {
  std::vector<uint32_t> index;
  std::vector<V> value;

  size_t size() const { return index.size(); }
  void clear() {
    index.clear();
    value.clear();
  }
  void push(uint32_t i, V v) {
    if (v == V{0}) return;
    index.push_back(i);
    value.push_back(v);
  }
};

// out = the non-zero items of `s`, a stream over [0, N) in either form.
template <class V>
void load(const Stream<V>& s, Entries<V>& out) {
  out.clear();
  for (const Pair<V>& p : s.pairs()) out.push(p.index, p.value);
  const auto values = s.values();
  for (size_t i = 0; i < values.size(); ++i) out.push(static_cast<uint32_t>(i), values[i]);
}

// out = a + b; an index in both gets one addition, a sum of zero is left out.
template <class V>
void add(const Entries<V>& a, const Entries<V>& b, Entries<V>& out) {
  out.clear();
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (a.index[i] < b.index[j]) {
      out.push(a.index[i], a.value[i]);
      ++i;
    } else if (b.index[j] < a.index[i]) {
      out.push(b.index[j], b.value[j]);
      ++j;
    } else {
      out.push(a.index[i], a.value[i] + b.value[j]);
      ++i;
      ++j;
    }
  }
  for (; i < a.size(); ++i) out.push(a.index[i], a.value[i]);
  for (; j < b.size(); ++j) out.push(b.index[j], b.value[j]);
}

template <class V>
class Gtopk final : public TopkAllreduce<V> {
 public:
  Gtopk(CountedComm& comm, uint32_t dim, const TopkCollectiveConfig& config)
      : comm_(comm), wire_(comm, config.packs()), whole_{0, dim}, fold_(comm.rank(), comm.size()),
        selector_(make_topk_selector("exact")), features_(config.columns),
        message_(dim), in_(dim) {
  }

  const Stream<V>& allreduce(const Stream<V>& selected, uint64_t k, Stream<V>& dropped) override {
    CountedComm::Timed timed(comm_);
    k_ = k;
    acc_.clear();
    dropped_.clear();
    load(selected, received_);
    merge();
    if (fold_.folded_out()) pack();
    fold_in(wire_, fold_, message_, in_, [&] { merge_from(in_); });
    if (!fold_.folded_out()) {
      reduce(fold_.new_rank);
      broadcast(fold_.new_rank);
    }
    fold_out(wire_, fold_, message_);
    encode<V>(dropped_.index, dropped_.value, whole_, kByteBound, dropped);
    return message_;
  }

 private:
  // Rounds of doubling distance: a rank with the round's bit set hands its top k to the
  // rank without it and is done; new rank 0 ends with the global top k in message_.
  void reduce(int me) {
    for (int mask = 1; mask < fold_.p2; mask <<= 1) {
      if (me & mask) {
        pack();
        wire_.send(message_, fold_.old_rank(me ^ mask), kTagStage);
        return;
      }
      wire_.recv(in_, fold_.old_rank(me | mask), kTagStage);
      merge_from(in_);
    }
    pack();
  }

  // The reduction tree run backwards: a rank gets the result from the rank it sent to, then
  // passes it to the ranks that sent to it, farthest first. kTagStage serves both phases:
  // on every edge of the tree the reduction's message goes up and the broadcast's down.
  void broadcast(int me) {
    int mask = 1;
    while (mask < fold_.p2 && !(me & mask)) mask <<= 1;
    if (mask < fold_.p2) wire_.recv(message_, fold_.old_rank(me ^ mask), kTagStage);
    for (mask >>= 1; mask > 0; mask >>= 1) wire_.send(message_, fold_.old_rank(me | mask), kTagStage);
  }

  void merge_from(const Stream<V>& in) {
    load(in, received_);
    merge();
  }

  // acc = the top k of acc + received; the rest joins this rank's dropped.
  void merge() {
    add(acc_, received_, sum_);
    if (sum_.size() <= k_) {
      std::swap(acc_, sum_);
      return;
    }
    if (features_.columns() > 1) {
      features_.select(*selector_, sum_.index, magnitudes(), k_, kept_);
    } else {
      selector_->select(magnitudes(), k_, kept_);
    }
    acc_.clear();
    left_.clear();
    size_t next = 0;
    for (size_t j = 0; j < sum_.size(); ++j) {
      const bool keep = next < kept_.size() && kept_[next] == j;
      next += keep;
      (keep ? acc_ : left_).push(sum_.index[j], sum_.value[j]);
    }
    add(dropped_, left_, sum_);
    std::swap(dropped_, sum_);
  }

  std::span<const float> magnitudes() {
    if constexpr (std::is_same_v<V, float>) {
      return sum_.value;
    } else {
      as_float_.assign(sum_.value.begin(), sum_.value.end());
      return as_float_;
    }
  }

  // Sparse while the pairs take fewer bytes than the dense form: only the bytes decide.
  void pack() { encode<V>(acc_.index, acc_.value, whole_, kByteBound, message_); }

  CountedComm& comm_;
  StreamWire<V> wire_;
  Range whole_;
  Fold fold_;
  std::unique_ptr<TopkSelector> selector_;
  FeatureSelector features_;  // with K columns, a merge keeps whole features
  uint64_t k_ = 0;
  Stream<V> message_, in_;  // message_: what this rank sends, and at the end the result
  Entries<V> acc_, received_, sum_, left_, dropped_;
  std::vector<uint32_t> kept_;
  std::vector<float> as_float_;
};

}  // namespace

// The bytes rank 0 sends, log2(P) k pairs. Table 1's 4k log2(P) words (2 log2(P) k pairs) is
// its critical path, which counts the k pairs it receives in each reduction round before
// the k pairs it sends in each broadcast round; the other algorithms' figures count one
// direction because their sends and receives overlap.
double gtopk_volume(const TopkVolumeInputs& in) {
  return std::log2(static_cast<double>(in.ranks)) * static_cast<double>(in.k) * in.pair_bytes;
}

template <class V>
std::unique_ptr<TopkAllreduce<V>> make_gtopk(CountedComm& comm, uint32_t dim, const TopkCollectiveConfig& c) {
  check_message_size<V>(dim, "gtopk");  // before any buffer is made
  return std::make_unique<Gtopk<V>>(comm, dim, c);
}
template std::unique_ptr<TopkAllreduce<float>> make_gtopk(CountedComm&, uint32_t, const TopkCollectiveConfig&);
template std::unique_ptr<TopkAllreduce<double>> make_gtopk(CountedComm&, uint32_t, const TopkCollectiveConfig&);

}  // namespace mpisgd
