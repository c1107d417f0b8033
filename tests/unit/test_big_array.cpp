// The big arrays' pages (data/big_array.h): a stream's first 256 KiB on small pages, the
// rest marked for huge ones; local SGD's model copy and the CSR marked throughout. The
// marks are read back from /proc/self/smaps (VmFlags "hg": MADV_HUGEPAGE), where Linux
// gives them.
#include <catch2/catch.hpp>

#include <cstdint>
#include <fstream>
#include <numeric>
#include <optional>
#include <sstream>
#include <string>

#include "data/big_array.h"
#include "sparse/stream.h"

using namespace mpisgd;

namespace {

constexpr size_t kMiB = size_t{1} << 20;

// Whether the mapping holding `p` was advised MADV_HUGEPAGE; nothing where smaps is absent.
std::optional<bool> advised_huge(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  if (!smaps) return std::nullopt;
  const auto at = reinterpret_cast<uintptr_t>(p);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    uintptr_t begin = 0, end = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> begin >> dash >> end && dash == '-') {
      inside = begin <= at && at < end;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line.find(" hg") != std::string::npos;
    }
  }
  return std::nullopt;
}

}  // namespace

TEST_CASE("a huge-tail array keeps its first 256 KiB on small pages, the rest advised huge", "[big-array]") {
  HugeTailArray<uint64_t> a(16 * kMiB / sizeof(uint64_t));
  const auto* bytes = reinterpret_cast<const char*>(a.data());
  // The head ends on a huge page's boundary, so the tail's pages can all be huge.
  CHECK((reinterpret_cast<uintptr_t>(bytes) + 256 * 1024) % (2 * kMiB) == 0);
  std::iota(a.begin(), a.end(), uint64_t{0});  // every element writable, head and tail
  CHECK(a.front() == 0);
  CHECK(a.back() == a.size() - 1);
  const auto head = advised_huge(bytes), tail = advised_huge(bytes + 256 * 1024);
  if (!head || !tail) {
    WARN("no /proc/self/smaps: the pages' advice was not read back");
    return;
  }
  CHECK_FALSE(*head);
  CHECK(*tail);
  CHECK(*advised_huge(bytes + a.size() * sizeof(uint64_t) - 1));
}

TEST_CASE("a huge-page array is advised huge from its first byte", "[big-array]") {
  HugePageArray<float> a(8 * kMiB / sizeof(float), 1.0f);
  CHECK(reinterpret_cast<uintptr_t>(a.data()) % (2 * kMiB) == 0);
  if (const auto first = advised_huge(a.data())) CHECK(*first);
}

TEST_CASE("a stream over a URL-sized range lies on a huge-tail array", "[big-array]") {
  // 3.2M features: a dense form of 12.8 MB, of which a sparse step writes a few pairs.
  Stream<float> s(3'200'000);
  const auto* block = static_cast<const char*>(s.data());
  CHECK((reinterpret_cast<uintptr_t>(block) + 256 * 1024) % (2 * kMiB) == 0);
  if (const auto head = advised_huge(block)) CHECK_FALSE(*head);
  // Swapping streams swaps their blocks, which each free as they were allocated.
  Stream<float> t(3'200'000);
  s.swap(t);
  CHECK(t.data() == block);
}
