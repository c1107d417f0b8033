#pragma once
// The dense AllGather that ends both DSAR variants: every rank contributes one dense
// slice of [0, N) and all end with the whole vector. MPI picks the algorithm (ring or
// recursive doubling); the bytes counted are those of a bandwidth-optimal one
// (CountedComm::allgatherv): each rank receives, and forwards, everything but its own
// slice, (N - n_own) values.
#include <vector>

#include <mpi.h>

#include "comm/counted_comm.h"
#include "sparse/stream.h"

namespace mpisgd {

template <class V>
class DenseAllgather {
 public:
  // slices[r]: the range rank r of `counter`'s communicator contributes; they tile [0, N).
  DenseAllgather(CountedComm& counter, const std::vector<Range>& slices) : counter_(counter) {
    for (const Range& r : slices) {
      counts_.push_back(static_cast<int>(r.length()));
      displs_.push_back(static_cast<int>(r.begin));
    }
  }

  // Collective: `whole` holds this rank's slice in place; on return it holds all of them.
  void run(V* whole) {
    counter_.allgatherv(MPI_IN_PLACE, whole, counts_.data(), displs_.data(), mpi_type<V>());
  }

 private:
  CountedComm& counter_;
  std::vector<int> counts_, displs_;
};

}  // namespace mpisgd
