// CRC-32C, the binary cache's block checksum: known values, every length the three-stream
// path splits differently, and the pieces ranks combine by XOR.
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <vector>

#include "data/crc32c.h"

using namespace mpisgd;

namespace {

// One bit at a time, straight from the definition.
uint32_t reference_crc32c(const unsigned char* p, size_t n) {
  uint32_t crc = ~0u;
  for (size_t i = 0; i < n; ++i) {
    crc ^= p[i];
    for (int k = 0; k < 8; ++k) crc = crc & 1 ? (crc >> 1) ^ 0x82F63B78u : crc >> 1;
  }
  return ~crc;
}

std::vector<unsigned char> random_bytes(size_t n) {
  std::mt19937 gen(7);
  std::vector<unsigned char> bytes(n);
  for (auto& b : bytes) b = static_cast<unsigned char>(gen());
  return bytes;
}

}  // namespace

TEST_CASE("crc32c: the check value and RFC 3720's test vectors", "[crc32c]") {
  REQUIRE(crc32c(0, "123456789", 9) == 0xE3069283u);
  const std::vector<unsigned char> zeros(32, 0), ones(32, 0xFF);
  REQUIRE(crc32c(0, zeros.data(), 32) == 0x8A9136AAu);
  REQUIRE(crc32c(0, ones.data(), 32) == 0x62A8AB43u);
  REQUIRE(crc32c_zeros(32) == 0x8A9136AAu);
  REQUIRE(crc32c(0, nullptr, 0) == 0);
}

TEST_CASE("crc32c: any length and alignment, in one call or continued", "[crc32c]") {
  const auto bytes = random_bytes(60000);
  // Around the three-stream stretches (3 x 256 and 3 x 8192 bytes) and the 8-byte words.
  for (size_t n : {1, 7, 8, 9, 767, 768, 769, 1000, 24575, 24576, 24577, 25343, 50000}) {
    for (size_t offset : {0, 1, 5}) {
      INFO("n = " << n << ", offset " << offset);
      const unsigned char* p = bytes.data() + offset;
      const uint32_t want = reference_crc32c(p, n);
      REQUIRE(crc32c(0, p, n) == want);
      REQUIRE(crc32c(crc32c(0, p, n / 3), p + n / 3, n - n / 3) == want);
    }
  }
}

TEST_CASE("crc32c: a block's CRC is the XOR of its pieces' terms, in any order", "[crc32c]") {
  const auto bytes = random_bytes(30000);
  const unsigned char* p = bytes.data();
  const size_t n = bytes.size(), a = 1234, b = 26000;
  const uint32_t want = crc32c(0, p, n);
  REQUIRE((crc32c_zeros(n) ^ crc32c_term(p + b, n - b, 0) ^ crc32c_term(p, a, n - a) ^
           crc32c_term(p + a, b - a, n - b)) == want);
  REQUIRE((crc32c_zeros(n) ^ crc32c_term(p, n, 0)) == want);
  REQUIRE(crc32c_zeros(0) == 0);
}
