#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <mpi.h>

#include "data/dataset.h"
#include "data/libsvm_parser.h"

namespace mpisgd {

struct LoadOptions {
  bool zero_based = false;
  uint64_t dim = 0;  // --dim; 0 = the largest index in the file
  size_t chunk_bytes = size_t{1} << 20;
  // Ranks [0, readers) split the rows among them, as a job of that many ranks would; the
  // others (parameter servers) get none, only N. 0: every rank reads.
  int readers = 0;
  // --max-memory for a text file (data/csr_memory.h): nullopt for auto, 0 for no check.
  std::optional<uint64_t> max_memory;
};

struct LoadedData {
  Dataset data;
  std::vector<LabelSeen> first_labels;  // for agree_on_labels
  std::string dim_origin;  // what set N, for messages: "f.svm:7: index 3000000000", "--dim 5"
};

// Collective: this rank's share of a LIBSVM text file or of a binary cache (told apart by
// the cache's magic bytes, not by the file name).
LoadedData load_dataset(const std::string& path, MPI_Comm comm, const LoadOptions& options);

}  // namespace mpisgd
