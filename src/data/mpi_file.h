#pragma once
// RAII MPI-IO file with reads and writes of any size (MPI counts are int, so large
// transfers go in pieces below 2 GiB) and errors that name the file. Under SimGrid
// (SIM=1), whose MPI-IO simulates a read's time but moves no bytes, the same class reads
// and writes with POSIX calls (posix_file_io.cpp).
#include <cstddef>
#include <functional>
#include <string>

#include <mpi.h>

namespace mpisgd {

class MpiFile {
 public:
  // Collective. A failure to open ends the job on every rank (JobFailed).
  static MpiFile open_read(const std::string& path, MPI_Comm comm);
  static MpiFile create_write(const std::string& path, MPI_Comm comm);

  MpiFile(MpiFile&& o) noexcept;
  MpiFile& operator=(MpiFile&&) = delete;
  MpiFile(const MpiFile&) = delete;
  ~MpiFile();

  MPI_Offset size() const { return size_; }
  const std::string& path() const { return path_; }
  // Independent I/O; throws std::runtime_error naming the file on failure.
  size_t read_at(MPI_Offset offset, void* buf, size_t bytes);
  void read_exact(MPI_Offset offset, void* buf, size_t bytes);
  void write_at(MPI_Offset offset, const void* buf, size_t bytes);
  void close();  // collective

 private:
  static MpiFile open(const std::string& path, MPI_Comm comm, bool write);
  MpiFile(std::string path, MPI_Offset size) : path_(std::move(path)), size_(size) {}
  [[noreturn]] void fail(const std::string& what, const std::string& why) const;

  std::string path_;
  MPI_File fh_ = MPI_FILE_NULL;  // MPI-IO's handle (mpi_file_io.cpp)
  int fd_ = -1;                  // or the descriptor (posix_file_io.cpp)
  MPI_Offset size_ = 0;
};

std::string mpi_error_string(int code);

// Collective: every rank writes its part of `path` through `write`, into path.tmp, which
// is renamed to `path` once all ranks succeeded and removed otherwise, so a failed job
// leaves no half-written file. Any rank's failure throws JobFailed on every rank.
void write_file_atomically(const std::string& path, MPI_Comm comm, const std::function<void(MpiFile&)>& write);

}  // namespace mpisgd
