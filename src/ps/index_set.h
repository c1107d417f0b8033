#pragma once
// A set of indices in [0, n) that comes out sorted: a bitmap over n, plus the list of the
// words that hold a mark, so that reading the set back costs O(k + w log w) for k
// indices in w words, not O(n / 64). A worker gathers the distinct features of a batch
// with it (its sparse pull), a server the indices the pushes of a step touch.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

namespace mpisgd {

class IndexSet {
 public:
  explicit IndexSet(uint32_t n) : bits_((uint64_t{n} + 63) / 64, 0) {}

  void insert(uint32_t i) {
    uint64_t& word = bits_[i >> 6];
    if (!word) words_.push_back(i >> 6);
    word |= uint64_t{1} << (i & 63);
  }

  // Appends the set, ascending, to `out` and empties it.
  void drain(std::vector<uint32_t>& out) {
    std::sort(words_.begin(), words_.end());
    for (uint32_t w : words_) {
      for (uint64_t word = bits_[w]; word; word &= word - 1)
        out.push_back((w << 6) | static_cast<uint32_t>(std::countr_zero(word)));
      bits_[w] = 0;
    }
    words_.clear();
  }

 private:
  std::vector<uint64_t> bits_;
  std::vector<uint32_t> words_;
};

}  // namespace mpisgd
