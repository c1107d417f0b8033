// The device's exact top-k selection (device/thrust_top_k.h, through DeviceTopK) against
// the host's exact selector (sparse/topk_select.h) on inputs that reach its edges: k from
// 1 to n - 1, ties at the k-th magnitude across the whole input, zeros among the kept,
// the largest values bunched where few samples fall, inputs too short to sample and signs
// mixed. Both must keep the same positions (the k largest, ties to the lower positions)
// and agree on the k-th magnitude, under CUDA as under Thrust's OpenMP backend: the
// selection compares magnitudes and does no arithmetic.
#include <catch2/catch.hpp>

#include <bit>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "device/device_top_k.h"
#include "sparse/topk_select.h"

using namespace mpisgd;

namespace {

void check_as_host(DeviceTopK& device, const std::vector<float>& values, uint64_t k) {
  INFO("n " << values.size() << " k " << k);
  std::vector<uint32_t> host;
  make_topk_selector("exact")->select(values, k, host);
  REQUIRE(host.size() == k);
  uint32_t kth = UINT32_MAX;
  for (const uint32_t i : host) kth = std::min(kth, std::bit_cast<uint32_t>(values[i]) & 0x7fffffffu);
  device.load(values);
  CHECK(device.select(k) == kth);
  CHECK(device.kept() == host);
}

}  // namespace

TEST_CASE("device top-k: keeps what the host's exact selector keeps", "[device]") {
  std::mt19937_64 rng(29);
  std::normal_distribution<float> normal;
  DeviceTopK device;

  SECTION("gradient-like values, k from 1 to n - 1") {
    std::vector<float> v(200000);
    for (float& x : v) x = normal(rng);
    for (const uint64_t k : {uint64_t{1}, uint64_t{7}, uint64_t{200}, uint64_t{20000}, uint64_t{199999}})
      check_as_host(device, v, k);
  }
  SECTION("every magnitude equal, signs mixed: ties decide it all") {
    std::vector<float> v(50000);
    for (size_t i = 0; i < v.size(); ++i) v[i] = i % 3 ? 0.5f : -0.5f;
    for (const uint64_t k : {uint64_t{1}, uint64_t{1000}, uint64_t{49999}}) check_as_host(device, v, k);
  }
  SECTION("few distinct magnitudes, ties at the k-th") {
    std::vector<float> v(100000);
    std::uniform_int_distribution<int> level(0, 5);
    for (float& x : v) x = static_cast<float>(level(rng)) * (rng() % 2 ? 1.0f : -1.0f);
    for (const uint64_t k : {uint64_t{10}, uint64_t{16000}, uint64_t{50000}, uint64_t{90000}})
      check_as_host(device, v, k);
  }
  SECTION("mostly zeros, and k past the non-zeros: zeros are kept by position") {
    std::vector<float> v(120000, 0.0f);
    for (size_t i = 0; i < v.size(); i += 37) v[i] = normal(rng);
    check_as_host(device, v, 1000);
    check_as_host(device, v, 6000);
  }
  SECTION("the largest bunched in one place, which few samples reach") {
    std::vector<float> v(1000000);
    for (float& x : v) x = normal(rng) * 1e-3f;
    for (size_t i = 500000; i < 502000; ++i) v[i] = 10.0f + normal(rng);
    for (const uint64_t k : {uint64_t{100}, uint64_t{2000}, uint64_t{2500}}) check_as_host(device, v, k);
  }
  SECTION("inputs too short to sample") {
    for (const size_t n : {size_t{2}, size_t{17}, size_t{300}}) {
      std::vector<float> v(n);
      for (float& x : v) x = normal(rng);
      for (const uint64_t k : {uint64_t{1}, uint64_t{n / 2}, uint64_t{n - 1}})
        if (k >= 1) check_as_host(device, v, k);
    }
  }
}

TEST_CASE("device top-k: one read gives the largest magnitude", "[device]") {
  DeviceTopK device;
  device.load(std::vector<float>{0.25f, -3.5f, 1.0f, -0.0f});
  CHECK(device.read() == (std::bit_cast<uint32_t>(3.5f)));
}
