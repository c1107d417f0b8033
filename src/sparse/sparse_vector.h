#pragma once
// A sparse update: (index, value) pairs with strictly ascending indices.
#include <cstdint>
#include <vector>

namespace mpisgd {

struct SparseVector {
  std::vector<uint32_t> index;
  std::vector<float> value;

  size_t nnz() const { return index.size(); }
  void clear() {
    index.clear();
    value.clear();
  }
};

}  // namespace mpisgd
