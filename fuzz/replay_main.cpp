// A main() for the fuzz targets built without libFuzzer (g++, no clang needed): runs the
// target once on each file named, or on each file of each folder named, so that `make
// test` replays the checked-in corpus. Exits non-zero when given no input at all.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

void run(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // As libFuzzer hands it over: an exactly sized heap copy (so AddressSanitizer sees an
  // overread), never a null pointer, even for an empty input.
  const std::unique_ptr<uint8_t[]> data(new uint8_t[bytes.size()]);
  std::copy(bytes.begin(), bytes.end(), data.get());
  LLVMFuzzerTestOneInput(data.get(), bytes.size());
}

}  // namespace

int main(int argc, char** argv) {
  size_t inputs = 0;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path arg(argv[i]);
    if (!std::filesystem::is_directory(arg)) {
      run(arg);
      ++inputs;
      continue;
    }
    for (const auto& entry : std::filesystem::directory_iterator(arg))
      if (entry.is_regular_file()) {
        run(entry.path());
        ++inputs;
      }
  }
  std::printf("%s: %zu inputs replayed, none failed\n", argv[0], inputs);
  return inputs > 0 ? 0 : 1;
}
