#pragma once
// An allocator for the big arrays of a run (the CSR of a rank's rows, the weight vector):
// arrays of 4 MiB and more start on a 2 MiB boundary and ask the kernel for transparent
// huge pages. A 2 MiB page maps what 512 small pages map, which matters twice here:
// first-touch page faults while the CSR fills (one per 2 MiB instead of per 4 KiB), and
// TLB misses of the random weight accesses of SGD (a 13 MB weight vector is 3,200 small
// pages, more than a second-level TLB holds, and 7 huge ones).
// It also default-initialises: resize() leaves trivial elements unwritten, so an array
// that is about to be overwritten (a read, a parse) is not zero-filled first.
#include <sys/mman.h>

#include <cstddef>
#include <cstdlib>
#include <new>
#include <utility>
#include <vector>

namespace mpisgd {

template <class T>
struct HugePageAllocator {
  using value_type = T;
  static constexpr size_t kHugePage = size_t{2} << 20;
  static constexpr size_t kMinBytes = size_t{4} << 20;

  HugePageAllocator() = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) noexcept {}

  T* allocate(size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes < kMinBytes) return static_cast<T*>(::operator new(bytes));
    const size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
    void* p = std::aligned_alloc(kHugePage, rounded);
    if (!p) throw std::bad_alloc();
    madvise(p, rounded, MADV_HUGEPAGE);  // advice only: without THP the small pages still work
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t n) noexcept {
    if (n * sizeof(T) < kMinBytes)
      ::operator delete(p);
    else
      std::free(p);
  }

  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }

  template <class U>
  bool operator==(const HugePageAllocator<U>&) const noexcept { return true; }
};

template <class T>
using BigArray = std::vector<T, HugePageAllocator<T>>;

}  // namespace mpisgd
