#include "data/load_dataset.h"

#include "comm/job_error.h"
#include "data/binary_cache.h"
#include "data/labels.h"
#include "data/mpiio_text_reader.h"

namespace mpisgd {

LoadedData load_dataset(const std::string& path, MPI_Comm comm, const LoadOptions& options) {
  if (!is_binary_cache(path, comm)) {
    TextReadOptions text{{options.zero_based, options.dim}, options.chunk_bytes};
    auto [data, labels] = read_libsvm_text(path, comm, text);
    return {std::move(data), std::move(labels)};
  }
  LoadedData loaded{read_binary_cache(path, comm), {}};
  if (options.dim) {
    if (loaded.data.dim > options.dim)
      throw JobFailed(InputError(path, 0, "has " + std::to_string(loaded.data.dim) +
                                              " features, above --dim " + std::to_string(options.dim))
                          .what());
    loaded.data.dim = static_cast<uint32_t>(options.dim);
  }
  loaded.first_labels = first_distinct_labels(loaded.data);
  return loaded;
}

}  // namespace mpisgd
