// MpiFile over MPI-IO: the build for real MPI libraries (posix_file_io.cpp is SIM=1's).
#include <algorithm>
#include <optional>

#include "comm/counted_comm.h"
#include "comm/job_error.h"
#include "data/mpi_file.h"

namespace mpisgd {

MpiFile MpiFile::open(const std::string& path, MPI_Comm comm, bool write) {
  MPI_File fh = MPI_FILE_NULL;
  const int mode = write ? MPI_MODE_WRONLY | MPI_MODE_CREATE : MPI_MODE_RDONLY;
  int rc = MPI_File_open(comm, path.c_str(), mode, MPI_INFO_NULL, &fh);
  // Where the open failed on some ranks only, the others hold a handle: owned from here,
  // it is closed as agree_on_error's exception leaves.
  MpiFile file(path, 0);
  if (rc == MPI_SUCCESS) file.fh_ = fh;
  std::optional<LocalFailure> failure;
  if (rc != MPI_SUCCESS)
    failure = LocalFailure{0, path + ": cannot open for " + (write ? "writing" : "reading") + " (" +
                                  mpi_error_string(rc) + ")"};
  agree_on_error(comm, failure);
  MPI_File_get_size(file.fh_, &file.size_);
  return file;
}

MpiFile MpiFile::create_write(const std::string& path, MPI_Comm comm) {
  MpiFile file = open(path, comm, true);
  MPI_File_set_size(file.fh_, 0);
  file.size_ = 0;
  return file;
}

MpiFile::MpiFile(MpiFile&& o) noexcept : path_(std::move(o.path_)), fh_(o.fh_), size_(o.size_) {
  o.fh_ = MPI_FILE_NULL;
}

MpiFile::~MpiFile() { close(); }

void MpiFile::close() {
  if (fh_ != MPI_FILE_NULL) MPI_File_close(&fh_);
}

size_t MpiFile::read_at(MPI_Offset offset, void* buf, size_t bytes) {
  size_t done = 0;
  while (done < bytes) {
    int count = static_cast<int>(std::min(bytes - done, kMaxMpiCount));
    MPI_Status status;
    int rc = MPI_File_read_at(fh_, offset + static_cast<MPI_Offset>(done), static_cast<char*>(buf) + done,
                              count, MPI_BYTE, &status);
    if (rc != MPI_SUCCESS) fail("read", mpi_error_string(rc));
    int got = 0;
    MPI_Get_count(&status, MPI_BYTE, &got);
    done += static_cast<size_t>(got);
    if (got < count) break;  // end of file
  }
  return done;
}

void MpiFile::write_at(MPI_Offset offset, const void* buf, size_t bytes) {
  size_t done = 0;
  while (done < bytes) {
    int count = static_cast<int>(std::min(bytes - done, kMaxMpiCount));
    MPI_Status status;
    int rc = MPI_File_write_at(fh_, offset + static_cast<MPI_Offset>(done),
                               static_cast<const char*>(buf) + done, count, MPI_BYTE, &status);
    if (rc != MPI_SUCCESS) fail("write", mpi_error_string(rc));
    done += static_cast<size_t>(count);
  }
}

}  // namespace mpisgd
