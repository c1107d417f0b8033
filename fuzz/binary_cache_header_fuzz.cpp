// libFuzzer target for the binary cache's header checks (data/cache_header.h): the input
// is the file, its first 64 bytes the header. Each header is checked as it is, then with
// its checksum made right, so that the fuzzer reaches the size and layout checks behind
// the CRC. CacheHeaderError and std::runtime_error (another version) are expected
// answers; a crash or a sanitizer report is a bug, and so is a header accepted with
// sizes its file cannot hold, or a file starting with the magic not taken for a cache.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "data/cache_header.h"

using namespace mpisgd;

namespace {

void check(const CacheHeader& h, uint64_t size) {
  try {
    check_cache_header(h, size);
  } catch (const std::runtime_error&) {
    return;
  }
  // Accepted: every row takes at least 12 bytes and every entry 8 after the header.
  if (h.rows == 0 || size < sizeof h || h.rows > (size - sizeof h) / 12 || h.nnz > (size - sizeof h) / 8)
    std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Any bytes, read as whatever a file may start with: an intact header always starts
  // like a cache.
  const bool looks_like_cache = starts_like_cache(reinterpret_cast<const char*>(data), size);
  if (size >= sizeof kCacheMagic && std::memcmp(data, kCacheMagic, sizeof kCacheMagic) == 0 && !looks_like_cache)
    std::abort();
  CacheHeader h{};
  std::memcpy(&h, data, std::min(size, sizeof h));
  check(h, size);
  h.header_crc = cache_header_crc(h);
  check(h, size);
  return 0;
}
