#pragma once
// Tests write updates as index and value arrays (SparseVector), easy to build and compare;
// the trainer hands an update on as a stream's pairs (sparse/stream.h). These convert one
// into the other, and draw random updates.
#include <random>
#include <span>

#include "sparse/sparse_vector.h"
#include "sparse/stream.h"

namespace mpisgd {

// `v` as a sparse stream, as the gradient kernel writes one.
inline Stream<float> paired(const SparseVector& v) {
  Stream<float> s;
  s.reserve_pairs(v.nnz());
  s.set_sparse(static_cast<uint32_t>(v.nnz()));
  for (size_t j = 0; j < v.nnz(); ++j) s.pairs()[j] = {v.index[j], v.value[j]};
  return s;
}

inline SparseVector unpaired(std::span<const Pair<float>> pairs) {
  SparseVector v;
  for (const Pair<float>& p : pairs) {
    v.index.push_back(p.index);
    v.value.push_back(p.value);
  }
  return v;
}

// The pairs of a sparse stream (a dense one has none).
inline SparseVector unpaired(const Stream<float>& s) { return unpaired(s.pairs()); }

// Each of [0, dim) with chance `density`, integer values in [-8, 8] but 0, so that sums of
// such updates are exact.
inline SparseVector random_update(std::mt19937& rng, uint32_t dim, double density) {
  SparseVector v;
  std::bernoulli_distribution take(density);
  std::uniform_int_distribution<int> value(-8, 8);
  for (uint32_t i = 0; i < dim; ++i) {
    const int x = value(rng);
    if (x != 0 && take(rng)) {
      v.index.push_back(i);
      v.value.push_back(static_cast<float>(x));
    }
  }
  return v;
}

}  // namespace mpisgd
