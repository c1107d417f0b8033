#pragma once
// A read-only, private mapping of a byte range of a file, its pages mapped up front.
//
// Mapping a binary cache's CSR sections instead of reading them shares the bytes the
// page cache already holds: a read copies them into fresh memory, and the first write to
// fresh pages cost more than the copy itself on the virtual machines measured
// (docs/performance.md#figures-behind-the-code).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace mpisgd {

class FileMapping {
 public:
  // Bytes [offset, offset + length) of `path`, or nullptr when the file cannot be mapped
  // (a path only MPI-IO understands, such as ROMIO's "lustre:" prefix, or a file system
  // without mmap); `why` then says what failed.
  static std::shared_ptr<const FileMapping> map(const std::string& path, uint64_t offset, uint64_t length,
                                                std::string& why);

  FileMapping(const FileMapping&) = delete;
  FileMapping& operator=(const FileMapping&) = delete;
  ~FileMapping();

  const std::byte* data() const { return data_; }
  uint64_t size() const { return length_; }

 private:
  FileMapping(void* base, size_t mapped, const std::byte* data, uint64_t length)
      : base_(base), mapped_(mapped), data_(data), length_(length) {}

  void* base_;
  size_t mapped_;
  const std::byte* data_;
  uint64_t length_;
};

}  // namespace mpisgd
