#pragma once
// The weight slots' array: freshly mapped memory, which the kernel hands over zero, so no
// page of it is written before a step or a read touches it. Features that no row of a rank
// holds (after the feature order, the tail of each stripe: 45% of a Webspam-like file's N)
// then cost neither memory nor a first write at start-up, and every rank of a node pays
// that per copy of the model. On 2 MiB pages where the kernel grants them
// (data/big_array.h says why the weights want them). For types whose all-zero bytes are
// the value zero.
#include <sys/mman.h>

#include <algorithm>
#include <cstddef>
#include <new>
#include <type_traits>
#include <utility>

namespace mpisgd {

template <class T>
  requires std::is_trivially_copyable_v<T> && std::is_trivially_default_constructible_v<T>
class ZeroedArray {
 public:
  ZeroedArray() = default;
  explicit ZeroedArray(size_t n) : size_(n) {
    void* p = mmap(nullptr, bytes(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    madvise(p, bytes(), MADV_HUGEPAGE);  // advice only: without THP, small pages still work
    data_ = static_cast<T*>(p);
  }
  // A copy writes every page (copies of a model are for tests and comparisons).
  ZeroedArray(const ZeroedArray& o) : ZeroedArray(o.size_) { std::copy(o.begin(), o.end(), data_); }
  ZeroedArray(ZeroedArray&& o) noexcept : data_(std::exchange(o.data_, nullptr)), size_(std::exchange(o.size_, 0)) {}
  ZeroedArray& operator=(ZeroedArray o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    return *this;
  }
  ~ZeroedArray() {
    if (data_) munmap(data_, bytes());
  }

  size_t size() const { return size_; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  T* begin() { return data_; }
  T* end() { return data_ + size_; }
  const T* begin() const { return data_; }
  const T* end() const { return data_ + size_; }

 private:
  // At least one element, so that an empty array is a mapping too.
  size_t bytes() const { return std::max<size_t>(size_, 1) * sizeof(T); }

  T* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace mpisgd
