#pragma once
// One of a dataset's two big CSR arrays (indices or values): either memory the rank owns,
// filled by the text parser, or a read-only window into a mapped binary cache
// (data/file_mapping.h), which the window keeps alive. Readers see a const array either way.
#include <cassert>
#include <cstddef>
#include <initializer_list>
#include <memory>

#include "data/big_array.h"

namespace mpisgd {

template <class T>
class CsrArray {
 public:
  CsrArray() = default;
  CsrArray(std::initializer_list<T> values) : owned_(values) {}
  // n elements at `data`, valid while `keep_alive` lives.
  CsrArray(std::shared_ptr<const void> keep_alive, const T* data, size_t n)
      : keep_alive_(std::move(keep_alive)), view_(data), view_size_(n) {}

  bool mapped() const { return keep_alive_ != nullptr; }
  const T* data() const { return mapped() ? view_ : owned_.data(); }
  size_t size() const { return mapped() ? view_size_ : owned_.size(); }
  bool empty() const { return size() == 0; }
  const T& operator[](size_t i) const { return data()[i]; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size(); }

  // The array to fill; only an owned array can be written.
  HugePageArray<T>& owned() {
    assert(!mapped());
    return owned_;
  }

 private:
  HugePageArray<T> owned_;
  std::shared_ptr<const void> keep_alive_;
  const T* view_ = nullptr;
  size_t view_size_ = 0;
};

}  // namespace mpisgd
