#pragma once
// The memory a rank's model takes for N features, checked before anything of that size
// is allocated. N comes from the largest index in the data, so one stray index (a typo,
// an unhashed feature id) would otherwise size the weights of every rank: std::bad_alloc
// naming nothing, or a node swapping for a two-row file.
#include <cstdint>
#include <string>

#include <mpi.h>

namespace mpisgd {

// Per rank, at least: the weight slot (8 B: the weight and the gradient scratch lane,
// model/weights.h), AdaGrad's accumulator (4 B), one dense update vector of floats
// (4 B), which every strategy holds once an update goes dense, and the feature order's
// map (4 B, data/feature_order.h).
uint64_t model_bytes(uint64_t dim, bool adagrad);

// Collective over `comm`: throws JobFailed on every rank when the ranks of some node
// together need more than the node has available. `origin` says where N came from
// (e.g. "f.svm:2: index 4294967294"), and starts the message.
void check_model_memory(MPI_Comm comm, uint64_t dim, bool adagrad, const std::string& origin);

}  // namespace mpisgd
