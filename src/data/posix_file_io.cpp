// MpiFile over POSIX calls, for the SIM=1 build: SimGrid's MPI-IO charges a read's time to
// the simulated disk but hands back no bytes, so every rank opens, reads and writes the
// file itself. Loading is then not part of the simulated time; the epochs, which are what
// a simulation is for, are.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "comm/job_error.h"
#include "data/mpi_file.h"

namespace mpisgd {

MpiFile MpiFile::open(const std::string& path, MPI_Comm comm, bool write) {
  MpiFile file(path, 0);
  file.fd_ = ::open(path.c_str(), write ? O_WRONLY | O_CREAT | O_CLOEXEC : O_RDONLY | O_CLOEXEC, 0644);
  std::optional<LocalFailure> failure;
  struct stat st {};
  if (file.fd_ < 0 || fstat(file.fd_, &st) != 0)
    failure = LocalFailure{0, path + ": cannot open for " + (write ? "writing" : "reading") + " (" +
                                  std::strerror(errno) + ")"};
  agree_on_error(comm, failure);
  file.size_ = st.st_size;
  return file;
}

MpiFile MpiFile::create_write(const std::string& path, MPI_Comm comm) {
  MpiFile file = open(path, comm, true);
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  std::optional<LocalFailure> failure;
  if (rank == 0 && ftruncate(file.fd_, 0) != 0)
    failure = LocalFailure{0, path + ": cannot truncate (" + std::strerror(errno) + ")"};
  // Nobody writes before the old contents are gone.
  agree_on_error(comm, failure);
  file.size_ = 0;
  return file;
}

MpiFile::MpiFile(MpiFile&& o) noexcept : path_(std::move(o.path_)), fd_(o.fd_), size_(o.size_) { o.fd_ = -1; }

MpiFile::~MpiFile() { close(); }

void MpiFile::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

size_t MpiFile::read_at(MPI_Offset offset, void* buf, size_t bytes) {
  size_t done = 0;
  while (done < bytes) {
    const ssize_t got = pread(fd_, static_cast<char*>(buf) + done, bytes - done, offset + static_cast<off_t>(done));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) fail("read", std::strerror(errno));
    if (got == 0) break;  // end of file
    done += static_cast<size_t>(got);
  }
  return done;
}

void MpiFile::write_at(MPI_Offset offset, const void* buf, size_t bytes) {
  size_t done = 0;
  while (done < bytes) {
    const ssize_t put =
        pwrite(fd_, static_cast<const char*>(buf) + done, bytes - done, offset + static_cast<off_t>(done));
    if (put < 0 && errno == EINTR) continue;
    if (put < 0) fail("write", std::strerror(errno));
    done += static_cast<size_t>(put);
  }
}

}  // namespace mpisgd
