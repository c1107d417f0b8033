#include "comm/output_paths.h"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>

#include "comm/job_error.h"

namespace mpisgd {
namespace {

namespace fs = std::filesystem;

// Creates and removes a file in `folder`: permissions, a read-only mount or a full quota
// all show only when a file is made.
void probe(const OutputPath& o, const fs::path& folder) {
  std::string name = (folder / ".mpisgd-probe-XXXXXX").string();
  const int fd = ::mkstemp(name.data());
  if (fd < 0)
    throw std::runtime_error(o.flag + " " + o.path + ": cannot create a file in " + folder.string() + ": " +
                             std::strerror(errno));
  ::close(fd);
  ::unlink(name.c_str());
}

fs::path folder_of(const fs::path& p) { return p.parent_path().empty() ? fs::path(".") : p.parent_path(); }

void check_file(const OutputPath& o) {
  const fs::path path(o.path);
  if (fs::is_directory(path)) throw std::runtime_error(o.flag + " " + o.path + ": is a directory, not a file name");
  const fs::path folder = folder_of(path);
  if (!fs::is_directory(folder))
    throw std::runtime_error(o.flag + " " + o.path + ": the folder " + folder.string() +
                             (fs::exists(folder) ? " is not a directory" : " does not exist"));
  probe(o, folder);
}

// The run creates the missing part of the path (create_directories), so the check is on
// the deepest part that exists.
void check_directory(const OutputPath& o) {
  fs::path existing(o.path);
  while (!fs::exists(existing)) existing = folder_of(existing);
  if (!fs::is_directory(existing))
    throw std::runtime_error(o.flag + " " + o.path + ": " + existing.string() + " is not a directory");
  probe(o, existing);
}

}  // namespace

void check_output_paths(MPI_Comm comm, const std::vector<OutputPath>& outputs) {
  run_on_root(comm, 0, [&] {
    for (const OutputPath& o : outputs) {
      if (o.path.empty()) continue;
      if (o.kind == OutputPath::file)
        check_file(o);
      else
        check_directory(o);
    }
  });
}

}  // namespace mpisgd
