#include "model/model_memory.h"

#include <fmt/format.h>

#include <optional>
#include <string>

#include "comm/job_error.h"
#include "comm/node_facts.h"

namespace mpisgd {

uint64_t model_bytes(uint64_t dim, bool adagrad) { return dim * (8 + (adagrad ? 4 : 0) + 4 + 4); }

void check_model_memory(MPI_Comm comm, uint64_t dim, bool adagrad, const std::string& origin) {
  MPI_Comm node;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int ranks = 1, node_rank = 0;
  MPI_Comm_size(node, &ranks);
  MPI_Comm_rank(node, &node_rank);
  MPI_Comm_free(&node);

  // One rank per node speaks for it; the others' figures are the same.
  const uint64_t need = model_bytes(dim, adagrad), available = available_memory();
  std::optional<LocalFailure> failure;
  if (node_rank == 0 && available > 0 && need * static_cast<uint64_t>(ranks) > available) {
    constexpr double GiB = 1024.0 * 1024.0 * 1024.0;
    failure = LocalFailure{0, fmt::format("{} makes N = {} features: the model takes at least {:.1f} GiB on each "
                                          "of the {} rank{} of a node with {:.1f} GiB available; cap N with --dim, "
                                          "or correct the index",
                                          origin, dim, static_cast<double>(need) / GiB, ranks, ranks == 1 ? "" : "s",
                                          static_cast<double>(available) / GiB)};
  }
  agree_on_error(comm, failure);
}

}  // namespace mpisgd
