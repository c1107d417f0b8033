#include "comm/job_error.h"

#include <limits>
#include <vector>

namespace mpisgd {

void agree_on_error(MPI_Comm comm, const std::optional<LocalFailure>& local) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  // MPI has no MINLOC pair type with a 64-bit key, so agree on the smallest order
  // first, then on the lowest rank that holds it.
  unsigned long long mine = local ? local->order : std::numeric_limits<unsigned long long>::max();
  unsigned long long first = 0;
  MPI_Allreduce(&mine, &first, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, comm);
  int failed = local ? 1 : 0, any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, comm);
  if (!any) return;

  int candidate = (local && local->order == first) ? rank : std::numeric_limits<int>::max();
  int winner = 0;
  MPI_Allreduce(&candidate, &winner, 1, MPI_INT, MPI_MIN, comm);

  int length = rank == winner ? static_cast<int>(local->message.size()) : 0;
  MPI_Bcast(&length, 1, MPI_INT, winner, comm);
  std::vector<char> text(static_cast<size_t>(length));
  if (rank == winner) text.assign(local->message.begin(), local->message.end());
  MPI_Bcast(text.data(), length, MPI_CHAR, winner, comm);
  throw JobFailed(std::string(text.begin(), text.end()));
}

}  // namespace mpisgd
