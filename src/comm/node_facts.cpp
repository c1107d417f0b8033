#include "comm/node_facts.h"

#include <algorithm>
#include <fstream>
#include <optional>
#include <string>

namespace mpisgd {
namespace {

// The value after `key` in a file of "key value" lines (/proc/meminfo, memory.stat).
std::optional<uint64_t> field(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  std::string k;
  uint64_t v = 0;
  while (in >> k >> v) {
    if (k == key) return v;
    in.ignore(256, '\n');
  }
  return std::nullopt;
}

// A cgroup file holding one number; nullopt when absent or "max" (no limit).
std::optional<uint64_t> number(const std::string& path) {
  std::ifstream in(path);
  uint64_t v = 0;
  if (in >> v) return v;
  return std::nullopt;
}

// What this process's memory cgroup still lets it allocate: the limit less the usage,
// page cache that can be dropped (inactive files) aside; nullopt with no limit. cgroup v2
// ("0::/path" in /proc/self/cgroup) names memory.max, v1 memory.limit_in_bytes. In a
// container with its own cgroup namespace the group is the mount's root, hence the
// fallback.
std::optional<uint64_t> cgroup_room() {
  std::ifstream self("/proc/self/cgroup");
  std::optional<uint64_t> room;
  for (std::string line; std::getline(self, line);) {
    const auto a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    const std::string controllers = "," + line.substr(a + 1, b - a - 1) + ",", path = line.substr(b + 1);
    const bool v2 = controllers == ",,";
    if (!v2 && controllers.find(",memory,") == std::string::npos) continue;
    const std::string mount = v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/memory";
    for (const std::string& dir : {mount + path, mount}) {
      const auto limit = number(dir + (v2 ? "/memory.max" : "/memory.limit_in_bytes"));
      if (!limit) continue;
      if (*limit >= (uint64_t{1} << 60)) break;  // v1 writes "no limit" as a huge number
      const uint64_t used = number(dir + (v2 ? "/memory.current" : "/memory.usage_in_bytes")).value_or(0);
      const uint64_t cache = field(dir + "/memory.stat", v2 ? "inactive_file" : "total_inactive_file").value_or(0);
      const uint64_t held = used - std::min(used, cache);
      const uint64_t left = *limit - std::min(*limit, held);
      room = room ? std::min(*room, left) : left;
      break;
    }
  }
  return room;
}

}  // namespace

uint64_t available_memory() {
  const uint64_t node = field("/proc/meminfo", "MemAvailable:").value_or(0) * 1024;
  const auto group = cgroup_room();
  if (!group) return node;
  return node ? std::min(node, *group) : *group;
}

namespace {

// Size or rank in the communicator of `comm`'s ranks on this node.
int on_node(MPI_Comm comm, int (*query)(MPI_Comm, int*)) {
  MPI_Comm node;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int value = 0;
  query(node, &value);
  MPI_Comm_free(&node);
  return value;
}

}  // namespace

int ranks_on_node(MPI_Comm comm) { return on_node(comm, MPI_Comm_size); }
int rank_on_node(MPI_Comm comm) { return on_node(comm, MPI_Comm_rank); }

}  // namespace mpisgd
