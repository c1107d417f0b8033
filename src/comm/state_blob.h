#pragma once
// The bytes a checkpoint keeps of one object's state: plain values and vectors of them in
// the machine's own layout (a checkpoint is resumed on the machine type that wrote it; its
// header records the byte order, checkpoint_file.h). The reader throws on a short or
// overlong blob rather than leaving state half set.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace mpisgd {

class StateWriter {
 public:
  template <class T>
    requires std::is_trivially_copyable_v<T>
  void put(const T& x) {
    append(&x, sizeof x);
  }
  template <class T>
  void put_span(std::span<const T> v) {
    put<uint64_t>(v.size());
    append(v.data(), v.size_bytes());
  }
  template <class T>
  void put_vector(const std::vector<T>& v) {
    put_span(std::span<const T>(v));
  }
  void put_string(const std::string& s) { put_span(std::span<const char>(s.data(), s.size())); }
  // Model-sized states reserve their room at once: each page of a growing buffer is
  // faulted in again at every doubling, which made most of a checkpoint's time.
  void reserve_more(size_t n) { bytes_.reserve(bytes_.size() + n); }

  const std::vector<std::byte>& bytes() const { return bytes_; }
  std::vector<std::byte> take() { return std::move(bytes_); }

 private:
  void append(const void* p, size_t n) {
    const auto* b = static_cast<const std::byte*>(p);
    bytes_.insert(bytes_.end(), b, b + n);
  }
  std::vector<std::byte> bytes_;
};

class StateReader {
 public:
  explicit StateReader(std::span<const std::byte> bytes) : bytes_(bytes) {}

  template <class T>
    requires std::is_trivially_copyable_v<T>
  T get() {
    T x;
    std::memcpy(&x, take(sizeof x), sizeof x);
    return x;
  }
  template <class T>
  std::vector<T> get_vector() {
    const auto n = get<uint64_t>();
    if (n > (bytes_.size() - at_) / sizeof(T)) throw std::runtime_error("checkpoint state ends early");
    std::vector<T> v(n);
    // An empty vector's data() may be null, which memcpy must not be given even for 0 bytes.
    if (n > 0) std::memcpy(v.data(), take(n * sizeof(T)), n * sizeof(T));
    return v;
  }
  std::string get_string() {
    auto v = get_vector<char>();
    return {v.begin(), v.end()};
  }
  // Throws unless every byte was read: a blob longer than its reader expects is another
  // program's state.
  void expect_end() const {
    if (at_ != bytes_.size()) throw std::runtime_error("checkpoint state has unexpected trailing bytes");
  }

 private:
  const std::byte* take(size_t n) {
    if (n > bytes_.size() - at_) throw std::runtime_error("checkpoint state ends early");
    const std::byte* p = bytes_.data() + at_;
    at_ += n;
    return p;
  }
  std::span<const std::byte> bytes_;
  size_t at_ = 0;
};

}  // namespace mpisgd
