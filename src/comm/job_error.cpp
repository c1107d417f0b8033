#include "comm/job_error.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <thread>
#include <vector>

#include <spdlog/spdlog.h>

#include "comm/extrema.h"

namespace mpisgd {

void agree_on_error(MPI_Comm comm, const std::optional<LocalFailure>& local) {
  int rank = 0, size = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  // MPI has no MINLOC pair type with a 64-bit key, so agree on the smallest order
  // first, then on the lowest rank that holds it. Orders are line numbers: they fit
  // int64_t, and a rank without a failure offers the largest value.
  constexpr int64_t kNone = std::numeric_limits<int64_t>::max();
  const int64_t mine = local ? static_cast<int64_t>(local->order) : kNone;
  const int64_t first = min_over_ranks(comm, mine);
  if (!max_over_ranks(comm, local ? 1 : 0)) return;

  const int64_t winner = min_over_ranks(comm, local && mine == first ? rank : kNone);
  // Every rank computed the same winner, so a bad one ends every rank alike instead of
  // handing MPI_Bcast an invalid root.
  if (winner < 0 || winner >= size)
    throw JobFailed("the ranks could not agree on which failure to report (MPI reduction gave rank " +
                    std::to_string(winner) + "): this is a bug");
  const int root = static_cast<int>(winner);

  int length = rank == root ? static_cast<int>(local->message.size()) : 0;
  MPI_Bcast(&length, 1, MPI_INT, root, comm);
  std::vector<char> text(static_cast<size_t>(length));
  if (rank == root) text.assign(local->message.begin(), local->message.end());
  MPI_Bcast(text.data(), length, MPI_CHAR, root, comm);
  throw JobFailed(std::string(text.begin(), text.end()));
}

void abort_job(MPI_Comm comm) {
  spdlog::default_logger()->flush();
  std::fflush(stdout);
  std::fflush(stderr);
  // Long beside a launcher's poll of its ranks' pipes on a loaded node, short beside the
  // wait that led here.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  MPI_Abort(comm, 1);
  std::abort();  // MPI_Abort does not return; the compiler cannot know
}

}  // namespace mpisgd
