#include "data/load_dataset.h"

#include "comm/job_error.h"
#include "data/binary_cache.h"
#include "data/labels.h"
#include "data/mpiio_text_reader.h"

namespace mpisgd {

LoadedData load_dataset(const std::string& path, MPI_Comm comm, const LoadOptions& options) {
  const std::string dim_flag = "--dim " + std::to_string(options.dim);
  if (!is_binary_cache(path, comm)) {
    TextReadOptions text{{options.zero_based, options.dim}, options.chunk_bytes};
    auto [data, labels, dim_line] = read_libsvm_text(path, comm, text);
    const uint64_t index = uint64_t{data.dim} - (options.zero_based ? 1 : 0);
    std::string origin = options.dim ? dim_flag : InputError(path, dim_line, "index " + std::to_string(index)).what();
    return {std::move(data), std::move(labels), std::move(origin)};
  }
  check_dim_flag(options.dim);
  LoadedData loaded{read_binary_cache(path, comm), {}, options.dim ? dim_flag : path + " (its cache header)"};
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
