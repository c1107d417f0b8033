#include "data/mpi_file.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <stdexcept>

#include "comm/counted_comm.h"
#include "comm/job_error.h"

namespace mpisgd {
std::string mpi_error_string(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(code, text, &len);
  return std::string(text, static_cast<size_t>(len));
}

MpiFile MpiFile::open(const std::string& path, MPI_Comm comm, int mode, const char* purpose) {
  MPI_File fh = MPI_FILE_NULL;
  int rc = MPI_File_open(comm, path.c_str(), mode, MPI_INFO_NULL, &fh);
  // Where the open failed on some ranks only, the others hold a handle: owned from here,
  // it is closed as agree_on_error's exception leaves.
  MpiFile file(path, rc == MPI_SUCCESS ? fh : MPI_FILE_NULL, 0);
  std::optional<LocalFailure> failure;
  if (rc != MPI_SUCCESS)
    failure = LocalFailure{0, path + ": cannot open for " + purpose + " (" + mpi_error_string(rc) + ")"};
  agree_on_error(comm, failure);
  MPI_File_get_size(file.fh_, &file.size_);
  return file;
}

MpiFile MpiFile::open_read(const std::string& path, MPI_Comm comm) {
  return open(path, comm, MPI_MODE_RDONLY, "reading");
}

MpiFile MpiFile::create_write(const std::string& path, MPI_Comm comm) {
  MpiFile file = open(path, comm, MPI_MODE_WRONLY | MPI_MODE_CREATE, "writing");
  MPI_File_set_size(file.fh_, 0);
  file.size_ = 0;
  return file;
}

MpiFile::MpiFile(MpiFile&& o) noexcept : path_(std::move(o.path_)), fh_(o.fh_), size_(o.size_) {
  o.fh_ = MPI_FILE_NULL;
}

MpiFile::~MpiFile() {
  if (fh_ != MPI_FILE_NULL) MPI_File_close(&fh_);
}

void MpiFile::close() {
  if (fh_ != MPI_FILE_NULL) MPI_File_close(&fh_);
}

void MpiFile::fail(const std::string& what, int code) const {
  throw std::runtime_error(path_ + ": " + what + " failed (" + mpi_error_string(code) + ")");
}

size_t MpiFile::read_at(MPI_Offset offset, void* buf, size_t bytes) {
  size_t done = 0;
  while (done < bytes) {
    int count = static_cast<int>(std::min(bytes - done, kMaxMpiCount));
    MPI_Status status;
    int rc = MPI_File_read_at(fh_, offset + static_cast<MPI_Offset>(done), static_cast<char*>(buf) + done,
                              count, MPI_BYTE, &status);
    if (rc != MPI_SUCCESS) fail("read", rc);
    int got = 0;
    MPI_Get_count(&status, MPI_BYTE, &got);
    done += static_cast<size_t>(got);
    if (got < count) break;  // end of file
  }
  return done;
}

void MpiFile::read_exact(MPI_Offset offset, void* buf, size_t bytes) {
  if (read_at(offset, buf, bytes) != bytes)
    throw std::runtime_error(path_ + ": file is truncated (short read at byte " + std::to_string(offset) + ")");
}

void MpiFile::write_at(MPI_Offset offset, const void* buf, size_t bytes) {
  size_t done = 0;
  while (done < bytes) {
    int count = static_cast<int>(std::min(bytes - done, kMaxMpiCount));
    MPI_Status status;
    int rc = MPI_File_write_at(fh_, offset + static_cast<MPI_Offset>(done),
                               static_cast<const char*>(buf) + done, count, MPI_BYTE, &status);
    if (rc != MPI_SUCCESS) fail("write", rc);
    done += static_cast<size_t>(count);
  }
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
