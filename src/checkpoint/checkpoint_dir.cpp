#include "checkpoint/checkpoint_dir.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace mpisgd {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kPrefix = "epoch-", kSuffix = ".ckpt";

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw std::runtime_error(path + ": " + what + ": " + std::strerror(errno));
}

std::string file_name(int epoch) {
  char digits[16];
  std::snprintf(digits, sizeof digits, "%06d", epoch);
  return std::string(kPrefix) + digits + std::string(kSuffix);
}

// The epoch a checkpoint file's name gives, or -1 for any other name.
long epoch_of(const std::string& name) {
  if (!name.starts_with(kPrefix) || !name.ends_with(kSuffix)) return -1;
  const std::string digits = name.substr(kPrefix.size(), name.size() - kPrefix.size() - kSuffix.size());
  if (digits.empty() || digits.size() > 9 || !std::all_of(digits.begin(), digits.end(), ::isdigit)) return -1;
  return std::stol(digits);
}

// Checkpoint files in `dir`, newest (highest epoch) first.
std::vector<fs::path> checkpoints_in(const std::string& dir) {
  std::vector<std::pair<long, fs::path>> found;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const long epoch = epoch_of(entry.path().filename().string());
    if (epoch >= 0 && entry.is_regular_file()) found.emplace_back(epoch, entry.path());
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<fs::path> paths;
  for (auto& [epoch, path] : found) paths.push_back(std::move(path));
  return paths;
}

void fsync_path(const std::string& path, int flags) {
  const int fd = ::open(path.c_str(), flags);
  if (fd < 0) fail(path, "cannot open to sync");
  if (::fsync(fd) != 0) {
    ::close(fd);
    fail(path, "fsync failed");
  }
  ::close(fd);
}

void write_all(const std::string& path, std::span<const std::byte> bytes) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) fail(path, "cannot create");
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      fail(path, "write failed");
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0) {
    ::close(fd);
    fail(path, "fsync failed");
  }
  if (::close(fd) != 0) fail(path, "close failed");
}

}  // namespace

std::string write_checkpoint_file(const std::string& dir, int epoch, std::span<const std::byte> bytes) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw std::runtime_error(dir + ": cannot create the checkpoint directory: " + ec.message());
  const std::string path = (fs::path(dir) / file_name(epoch)).string();
  const std::string temporary = (fs::path(dir) / ("." + file_name(epoch) + ".tmp")).string();
  write_all(temporary, bytes);
  if (std::rename(temporary.c_str(), path.c_str()) != 0) fail(path, "cannot rename " + temporary + " to it");
  fsync_path(dir, O_RDONLY | O_DIRECTORY);  // makes the rename itself durable
  const auto all = checkpoints_in(dir);
  for (size_t i = kCheckpointsKept; i < all.size(); ++i) fs::remove(all[i], ec);
  return path;
}

std::optional<FoundCheckpoint> newest_valid_checkpoint(const std::string& dir, std::vector<std::string>& rejected) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw std::runtime_error(dir + ": no such checkpoint directory");
  for (const fs::path& p : checkpoints_in(dir)) {
    std::ifstream in(p, std::ios::binary);
    std::vector<char> raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) {
      rejected.push_back(p.string() + ": cannot be read");
      continue;
    }
    try {
      Checkpoint c = decode_checkpoint(std::as_bytes(std::span<const char>(raw)));
      return FoundCheckpoint{p.string(), std::move(c)};
    } catch (const std::runtime_error& e) {
      rejected.push_back(p.string() + ": " + e.what());
    }
  }
  return std::nullopt;
}

}  // namespace mpisgd
