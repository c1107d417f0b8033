#include "comm/core_sharing.h"

#include <sched.h>

#include <algorithm>
#include <vector>

namespace mpisgd {
namespace {

cpu_set_t affinity() {
  cpu_set_t mine;
  CPU_ZERO(&mine);
  if (sched_getaffinity(0, sizeof(mine), &mine) != 0) CPU_SET(0, &mine);
  return mine;
}

}  // namespace

double core_sharing(MPI_Comm comm) {
  MPI_Comm node;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int ranks = 1;
  MPI_Comm_size(node, &ranks);

  // The union of the node's masks: ranks bound one per core each see one CPU, and
  // unbound ranks all see the whole machine.
  cpu_set_t mine = affinity();
  std::vector<cpu_set_t> all(static_cast<size_t>(ranks));
  MPI_Allgather(&mine, sizeof(mine), MPI_BYTE, all.data(), sizeof(mine), MPI_BYTE, node);
  MPI_Comm_free(&node);
  cpu_set_t any;
  CPU_ZERO(&any);
  for (cpu_set_t& s : all) CPU_OR(&any, &any, &s);

  double sharing = std::max(1.0, static_cast<double>(ranks) / std::max(1, CPU_COUNT(&any)));
  MPI_Allreduce(MPI_IN_PLACE, &sharing, 1, MPI_DOUBLE, MPI_MAX, comm);
  return sharing;
}

int fewest_cpus(MPI_Comm comm) {
  cpu_set_t mine = affinity();
  int cpus = std::max(1, CPU_COUNT(&mine));
  MPI_Allreduce(MPI_IN_PLACE, &cpus, 1, MPI_INT, MPI_MIN, comm);
  return cpus;
}

}  // namespace mpisgd
