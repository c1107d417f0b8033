#include "data/mpi_file.h"

#include <cstdio>
#include <optional>
#include <stdexcept>

#include "comm/counted_comm.h"
#include "comm/job_error.h"

// What every build shares; opening, reading and writing are in mpi_file_io.cpp (MPI-IO)
// and posix_file_io.cpp (the SIM=1 build, whose MPI-IO moves no bytes).
namespace mpisgd {

std::string mpi_error_string(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(code, text, &len);
  return std::string(text, static_cast<size_t>(len));
}

MpiFile MpiFile::open_read(const std::string& path, MPI_Comm comm) { return open(path, comm, false); }

void MpiFile::fail(const std::string& what, const std::string& why) const {
  throw std::runtime_error(path_ + ": " + what + " failed (" + why + ")");
}

void MpiFile::read_exact(MPI_Offset offset, void* buf, size_t bytes) {
  if (read_at(offset, buf, bytes) != bytes)
    throw std::runtime_error(path_ + ": file is truncated (short read at byte " + std::to_string(offset) + ")");
}

void write_file_atomically(const std::string& path, MPI_Comm comm, const std::function<void(MpiFile&)>& write) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  const std::string tmp = path + ".tmp";
  std::optional<LocalFailure> failure;
  {
    MpiFile file = MpiFile::create_write(tmp, comm);
    try {
      write(file);
    } catch (const std::exception& e) {
      failure = LocalFailure{0, e.what()};
    }
    file.close();
  }
  try {
    agree_on_error(comm, failure);
  } catch (const JobFailed&) {
    if (rank == 0) std::remove(tmp.c_str());
    throw;
  }
  run_on_root(comm, 0, [&] {
    if (std::rename(tmp.c_str(), path.c_str()) != 0)
      throw std::runtime_error(path + ": cannot rename " + tmp + " into place");
  });
}

}  // namespace mpisgd
