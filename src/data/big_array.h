#pragma once
// Vectors for the big arrays of a run: the CSR of a rank's rows and the feature order's
// tables. (The weight slots take fresh pages of their own, model/zeroed_array.h, for the
// same reason as below.)
//
// Both default-initialise: resize() leaves trivial elements unwritten, so an array that
// is about to be overwritten (a binary cache read) is not zero-filled first.
//
// HugePageArray also places arrays of 4 MiB and more on a 2 MiB boundary and asks the
// kernel for transparent huge pages. For the weights that pays: SGD reads them at random,
// and a URL-sized model's weight slots are thousands of small pages, more than a
// second-level TLB holds, but a dozen huge ones. The CSR takes them too: an epoch reads
// its rows in shuffled order, each from anywhere in it, and ran faster on huge pages
// (URL-like rows on the 2-core VM: 0.26 s against 0.35 s, medians), while their first
// writes cost no more than small pages' there; so does the feature order's N-sized table,
// its counts and then its map (docs/performance.md#set-up-against-the-epochs). Streams
// keep small pages: they reserve dense room they mostly never write, and only what a
// stream writes should be mapped.
#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <utility>
#include <vector>

namespace mpisgd {

template <class T, bool kHugePages>
struct BigArrayAllocator {
  using value_type = T;
  static constexpr size_t kHugePage = size_t{2} << 20;
  static constexpr size_t kMinHugeBytes = size_t{4} << 20;

  template <class U>
  struct rebind {
    using other = BigArrayAllocator<U, kHugePages>;
  };

  BigArrayAllocator() = default;
  template <class U>
  BigArrayAllocator(const BigArrayAllocator<U, kHugePages>&) noexcept {}

  static bool huge(size_t n) { return kHugePages && n * sizeof(T) >= kMinHugeBytes; }

  T* allocate(size_t n) {
    if (!huge(n)) return static_cast<T*>(::operator new(n * sizeof(T)));
    const size_t rounded = (n * sizeof(T) + kHugePage - 1) / kHugePage * kHugePage;
    void* p = std::aligned_alloc(kHugePage, rounded);
    if (!p) throw std::bad_alloc();
    madvise(p, rounded, MADV_HUGEPAGE);  // advice only: without THP, small pages still work
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t n) noexcept {
    if (huge(n))
      std::free(p);
    else
      ::operator delete(p);
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
  bool operator==(const BigArrayAllocator<U, kHugePages>&) const noexcept {
    return true;
  }
};

template <class T>
using BigArray = std::vector<T, BigArrayAllocator<T, false>>;
template <class T>
using HugePageArray = std::vector<T, BigArrayAllocator<T, true>>;

// Maps the pages of elements [from, from + count) of a just-sized array in one call
// (Linux 5.14+; elsewhere the first write maps them, as always). Before a read into the
// range this is quicker than taking a page fault per page inside the copy.
template <class T, bool kHugePages>
void map_pages(std::vector<T, BigArrayAllocator<T, kHugePages>>& a, size_t from, size_t count) {
#ifdef MADV_POPULATE_WRITE
  constexpr uintptr_t kPage = 4096;
  const auto begin = reinterpret_cast<uintptr_t>(a.data() + from) & ~(kPage - 1);
  const auto end = (reinterpret_cast<uintptr_t>(a.data() + from + count) + kPage - 1) & ~(kPage - 1);
  if (count) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_POPULATE_WRITE);
#else
  (void)a, (void)from, (void)count;
#endif
}

}  // namespace mpisgd
