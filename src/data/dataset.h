#pragma once
// A rank's rows in CSR form. Indices are 0-based internally whatever the file used.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "data/big_array.h"
#include "data/csr_array.h"

namespace mpisgd {

struct Dataset {
  std::string path;
  BigArray<uint64_t> row_ptr{0};  // row i holds entries [row_ptr[i], row_ptr[i+1])
  CsrArray<uint32_t> index;
  CsrArray<float> value;
  BigArray<float> label;
  uint32_t dim = 0;           // global number of features, identical on every rank
  uint64_t global_rows = 0;   // rows over all ranks
  uint64_t first_row = 0;     // global number of this rank's first row

  uint64_t rows() const { return label.size(); }
  uint64_t nnz() const { return index.size(); }
  std::span<const uint32_t> row_index(uint64_t r) const {
    return {index.data() + row_ptr[r], index.data() + row_ptr[r + 1]};
  }
  std::span<const float> row_value(uint64_t r) const {
    return {value.data() + row_ptr[r], value.data() + row_ptr[r + 1]};
  }
  size_t bytes() const {
    return row_ptr.size() * sizeof(uint64_t) + index.size() * sizeof(uint32_t) +
           value.size() * sizeof(float) + label.size() * sizeof(float);
  }
};

}  // namespace mpisgd
