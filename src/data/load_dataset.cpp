#include "data/load_dataset.h"

#include <optional>

#include "comm/job_error.h"
#include "data/binary_cache.h"
#include "data/labels.h"
#include "data/mpiio_text_reader.h"

namespace mpisgd {

namespace {

LoadedData load_all(const std::string& path, MPI_Comm comm, const LoadOptions& options) {
  const std::string dim_flag = "--dim " + std::to_string(options.dim);
  if (!is_binary_cache(path, comm)) {
    TextReadOptions text{{options.zero_based, options.dim}, options.chunk_bytes, options.max_memory};
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

// Rank 0's `text` on every rank of `comm`.
std::string broadcast(std::string text, MPI_Comm comm) {
  uint64_t length = text.size();
  MPI_Bcast(&length, 1, MPI_UINT64_T, 0, comm);
  text.resize(length);
  MPI_Bcast(text.data(), static_cast<int>(length), MPI_CHAR, 0, comm);
  return text;
}

}  // namespace

LoadedData load_dataset(const std::string& path, MPI_Comm comm, const LoadOptions& options) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (options.readers <= 0 || options.readers >= size) return load_all(path, comm, options);

  // The readers fail together (their errors are agreed among them); the others learn of
  // it here instead of waiting for N.
  MPI_Comm readers = MPI_COMM_NULL;
  MPI_Comm_split(comm, rank < options.readers ? 0 : MPI_UNDEFINED, rank, &readers);
  LoadedData loaded;
  std::optional<LocalFailure> failure;
  if (readers != MPI_COMM_NULL) {
    try {
      loaded = load_all(path, readers, options);
    } catch (const JobFailed& e) {
      failure = LocalFailure{0, e.what()};
    }
    MPI_Comm_free(&readers);
  }
  agree_on_error(comm, failure);
  uint64_t shape[2] = {loaded.data.dim, loaded.data.global_rows};
  MPI_Bcast(shape, 2, MPI_UINT64_T, 0, comm);
  loaded.dim_origin = broadcast(loaded.dim_origin, comm);
  if (rank >= options.readers) {
    loaded.data.path = path;
    loaded.data.dim = static_cast<uint32_t>(shape[0]);
    loaded.data.global_rows = shape[1];
    loaded.data.first_row = shape[1];
  }
  return loaded;
}

}  // namespace mpisgd
