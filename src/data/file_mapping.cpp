#include "data/file_mapping.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace mpisgd {

std::shared_ptr<const FileMapping> FileMapping::map(const std::string& path, uint64_t offset, uint64_t length,
                                                    std::string& why) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    why = std::string("open: ") + std::strerror(errno);
    return nullptr;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || offset + length > static_cast<uint64_t>(st.st_size)) {
    why = "not a regular file of the expected size";
    ::close(fd);
    return nullptr;
  }
  if (length == 0) {  // a rank without entries: mmap rejects a length of 0
    ::close(fd);
    return std::shared_ptr<const FileMapping>(new FileMapping(nullptr, 0, nullptr, 0));
  }
  const auto page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t start = offset / page * page;
  const auto mapped = static_cast<size_t>(offset - start + length);
  void* base = ::mmap(nullptr, mapped, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, static_cast<off_t>(start));
  const int mmap_errno = errno;
  ::close(fd);  // the mapping keeps the file open
  if (base == MAP_FAILED) {
    why = std::string("mmap: ") + std::strerror(mmap_errno);
    return nullptr;
  }
  const auto* data = static_cast<const std::byte*>(base) + (offset - start);
  return std::shared_ptr<const FileMapping>(new FileMapping(base, mapped, data, length));
}

FileMapping::~FileMapping() {
  if (base_) ::munmap(base_, mapped_);
}

}  // namespace mpisgd
