#include "collectives/split_reduce.h"

#include "collectives/collective_util.h"
#include "sparse/stream_sum.h"

namespace mpisgd {

template <class V>
SplitReduce<V>::SplitReduce(MPI_Comm comm, CountedComm& counter, uint32_t dim, const DenseSwitch& sw,
                            bool runs)
    : comm_(comm), counter_(counter), wire_(counter, runs), whole_{0, dim}, sw_(sw) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
  // Sums swap buffers, so every buffer a part is summed in holds the longest range.
  const auto longest = static_cast<uint32_t>((uint64_t{dim} + size_ - 1) / size_);
  acc_.reserve(longest);
  scratch_.reserve(longest);
  send_.resize(size_);
  recv_.resize(size_);
  for (auto& s : recv_) s.reserve(longest);
  send_req_.resize(size_ - 1);
  recv_req_.resize(size_ - 1);
  arrived_.resize(size_);
  part_.resize(size_);
  pending_.resize(size_);
  tree_ = canonical_sum_order(size_);
  taken_.resize(tree_.size());
}

template <class V>
Range SplitReduce<V>::range(int part) const {
  return owned_range(whole_.end, size_, part);
}

template <class V>
const Stream<V>& SplitReduce<V>::reduce(const Stream<V>& input) {
  const int p = size_;
  for (int d = 1; d < p; ++d) {
    recv_req_[d - 1] = wire_.irecv(recv_[d], (rank_ - d + p) % p, kTagSplit, comm_);
  }
  for (int d = 1; d < p; ++d) {
    const int dest = (rank_ + d) % p;
    extract(input, whole_, range(dest), sw_, send_[d]);
    send_req_[d - 1] = wire_.isend(send_[d], d, dest, kTagSplit, comm_);
  }
  extract(input, whole_, owned(), sw_, acc_);

  // part[s]: where rank s's part is; sums land in the first operand's slot.
  for (int s = 0; s < p; ++s) part_[s] = s == rank_ ? &acc_ : &recv_[(rank_ - s + p) % p];
  std::fill(arrived_.begin(), arrived_.end(), 0);
  arrived_[rank_] = 1;
  std::fill(pending_.begin(), pending_.end(), 0);
  for (const auto& sum : tree_) ++pending_[sum.first];
  std::fill(taken_.begin(), taken_.end(), 0);
  size_t done = 0;
  for (int waiting = p - 1;;) {
    done = add_ready(done);
    if (waiting == 0) break;
    int bytes = 0;
    const int index = counter_.wait_any_received(recv_req_, &bytes);
    wire_.received(recv_[index + 1], bytes);
    arrived_[(rank_ - (index + 1) + p) % p] = 1;
    --waiting;
  }
  MPI_Waitall(p - 1, send_req_.data(), MPI_STATUSES_IGNORE);
  return *part_[0];
}

template <class V>
size_t SplitReduce<V>::add_ready(size_t done) {
  // Each sum is taken as soon as both operands are complete, so summation overlaps the
  // transfers still in flight.
  for (bool progress = true; progress;) {
    progress = false;
    for (size_t i = done; i < tree_.size(); ++i) {
      const auto [into, from] = tree_[i];
      if (taken_[i] || !arrived_[into] || !arrived_[from] || pending_[from] != 0 || !next_sum_into(into, i)) continue;
      add_overlapping(*part_[into], *part_[from], scratch_, owned(), sw_);
      --pending_[into];
      taken_[i] = 1;
      progress = true;
    }
    while (done < tree_.size() && taken_[done]) ++done;
  }
  return done;
}

template <class V>
bool SplitReduce<V>::next_sum_into(int into, size_t i) const {
  for (size_t j = 0; j < i; ++j) {
    if (tree_[j].first == into && !taken_[j]) return false;
  }
  return true;
}

template class SplitReduce<float>;
template class SplitReduce<double>;

}  // namespace mpisgd
