#pragma once
// Partitioned read of a LIBSVM text file with MPI-IO (collective over `comm`).
// Rank r of P owns the lines that start in bytes [r*S/P, (r+1)*S/P) of the S-byte file:
// it skips the partial line its range begins in and finishes the last line it starts,
// so together the ranks hold every row exactly once, for any P, even P > rows.
// The file is streamed through a bounded buffer: the text is never held whole.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <mpi.h>

#include "data/dataset.h"
#include "data/libsvm_parser.h"

namespace mpisgd {

struct TextReadOptions {
  ParseOptions parse;
  size_t chunk_bytes = size_t{1} << 20;  // MPI counts are int: must stay below 2 GiB
  // --max-memory (data/csr_memory.h): nullopt for auto, 0 for no check.
  std::optional<uint64_t> max_memory;
};

struct TextReadResult {
  Dataset data;
  std::vector<LabelSeen> first_labels;  // this rank's first distinct labels, global lines
  // Where N comes from: the first line holding the largest index (0 when --dim set N),
  // to name it when N is more than the memory holds.
  uint64_t dim_line = 0;
};

// Throws JobFailed (on every rank alike, as flags are) when `--dim` cannot be a number of
// features: indices are 32-bit, so at most 2^32 - 1.
void check_dim_flag(uint64_t dim);

// Throws JobFailed on every rank if any rank fails (naming file, line and cause), and
// before allocating anything when a rank's rows would not fit options.max_memory.
TextReadResult read_libsvm_text(const std::string& path, MPI_Comm comm,
                                const TextReadOptions& options);

}  // namespace mpisgd
