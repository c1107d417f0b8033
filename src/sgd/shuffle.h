#pragma once
// Seeded Fisher-Yates shuffle with our own generator (splitmix64), so a given
// (seed, rank, epoch) gives the same order with any standard library.
#include <cstdint>
#include <vector>

namespace mpisgd {

__extension__ typedef unsigned __int128 uint128;  // GCC/Clang; -Wpedantic would flag the bare name

inline uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

inline void shuffle_rows(std::vector<uint64_t>& order, uint64_t seed, int rank, int epoch) {
  uint64_t state = seed * 0xD1B54A32D192ED03ull ^ (static_cast<uint64_t>(rank) << 32) ^ static_cast<uint64_t>(epoch);
  splitmix64(state);
  for (uint64_t i = order.size(); i > 1; --i) {
    // Lemire's multiply-shift maps 64 random bits to [0, i) without a division.
    uint64_t j = static_cast<uint64_t>((static_cast<uint128>(splitmix64(state)) * i) >> 64);
    std::swap(order[i - 1], order[j]);
  }
}

}  // namespace mpisgd
