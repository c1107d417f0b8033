#include "collectives/oktopk_regions.h"

#include <algorithm>
#include <stdexcept>

#include "collectives/collective_util.h"
#include "sparse/stream_sum.h"

namespace mpisgd {

template <class V>
RegionReduce<V>::RegionReduce(CountedComm& comm, uint32_t dim, uint32_t columns, bool runs)
    : comm_(comm), columns_(std::max(1u, columns)), wire_(comm, runs), whole_{0, dim}, bound_(comm.size() + 1),
      votes_(comm.size()), send_(comm.size()), part_(comm.size()), send_req_(comm.size() - 1), recv_req_(comm.size(), MPI_REQUEST_NULL) {
  for (int j = 0; j < comm.size(); ++j) bound_[j] = aligned(owned_range(dim, comm.size(), j).begin);
  bound_[comm.size()] = dim;
  reserve_owned();
}

template <class V>
void RegionReduce<V>::repartition(const Stream<V>& selected) {
  const int p = comm_.size();
  std::fill(votes_.begin(), votes_.end(), 0);
  const uint64_t m = selected.is_dense() ? nonzeros(selected) : selected.count();
  if (m > 0) {
    // Cut j (1 <= j < P) is where run j starts: the index at position floor(j m / P).
    uint64_t position = 0;
    int j = 1;
    for_each_entry(selected, whole_, [&](uint32_t index, V) {
      for (; j < p && position == j * m / static_cast<uint64_t>(p); ++j) votes_[j - 1] += index;
      ++position;
    });
    votes_[p - 1] = 1;
  }
  comm_.allreduce_sum(votes_.data(), votes_.size());
  const uint64_t voters = votes_[p - 1];
  // Averages of non-decreasing cut sequences are non-decreasing, so the regions tile [0, N).
  for (int j = 1; j < p; ++j)
    bound_[j] = aligned(voters ? votes_[j - 1] / voters : owned_range(whole_.end, p, j).begin);
  reserve_owned();
}

template <class V>
void RegionReduce<V>::set_bounds(const std::vector<uint32_t>& bounds) {
  const auto misaligned = [&](uint32_t b) { return b % columns_ != 0 && b != whole_.end; };
  if (bounds.size() != bound_.size() || bounds.front() != whole_.begin || bounds.back() != whole_.end ||
      !std::is_sorted(bounds.begin(), bounds.end()) || std::any_of(bounds.begin(), bounds.end(), misaligned))
    throw std::runtime_error("checkpoint: oktopk region bounds do not tile [0, N) for this P and K");
  bound_ = bounds;
  reserve_owned();
}

template <class V>
void RegionReduce<V>::reserve_owned() {
  // Sums swap buffers, so every buffer a part arrives or is summed in holds the region.
  const uint32_t length = owned().length();
  for (auto& s : part_) s.reserve(length);
  acc_.reserve(length);
  scratch_.reserve(length);
}

template <class V>
const Stream<V>& RegionReduce<V>::reduce(const Stream<V>& selected) {
  const int p = comm_.size(), me = comm_.rank();
  for (int s = 0; s < p; ++s) {
    if (s == me) continue;
    recv_req_[s] = wire_.irecv(part_[s], s, kTagSplit);
  }
  // Parts travel as they are cheapest: pairs, or dense past the byte bound.
  for (int d = 1; d < p; ++d) {
    const int dest = (me + d) % p;
    extract(selected, whole_, region(dest), kByteBound, send_[d]);
    send_req_[d - 1] = wire_.isend(send_[d], d, dest, kTagSplit);
  }
  extract(selected, whole_, owned(), kByteBound, part_[me]);

  // acc = ((part_0 + part_1) + part_2) + ...: one order on every run. Waiting for the
  // parts in that order still sums each one while the later ones are in flight. The sums
  // stay pairs up to the byte bound: the global selection scans only what they hold.
  for (int s = 0; s < p; ++s) {
    if (s != me) wire_.received(part_[s], comm_.wait_received(recv_req_[s]));
    if (s == 0) {
      acc_.swap(part_[0]);
    } else {
      add_overlapping(acc_, part_[s], scratch_, owned(), kByteBound);
    }
  }
  MPI_Waitall(p - 1, send_req_.data(), MPI_STATUSES_IGNORE);
  return acc_;
}

template class RegionReduce<float>;
template class RegionReduce<double>;

}  // namespace mpisgd
