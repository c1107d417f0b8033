#pragma once
// Looking a name up in a registry (strategies, allreduce algorithms, top-k selections),
// with the one message a user gets for a name that is not there.
#include <stdexcept>
#include <string>
#include <string_view>

namespace mpisgd {

// "a, b, c": the names of `entries` (strings, or entries with a `name`), in order.
template <class Range>
std::string names_of(const Range& entries) {
  std::string known;
  for (const auto& entry : entries) {
    if constexpr (requires { entry.name; })
      known += (known.empty() ? "" : ", ") + std::string(entry.name);
    else
      known += (known.empty() ? "" : ", ") + std::string(entry);
  }
  return known;
}

// The entry of `registry` called `name`; throws std::invalid_argument "unknown WHAT
// 'NAME' (known: ...)" when there is none.
template <class Registry>
const auto& find_by_name(const Registry& registry, std::string_view name, const std::string& what) {
  for (const auto& entry : registry)
    if (entry.name == name) return entry;
  throw std::invalid_argument("unknown " + what + " '" + std::string(name) + "' (known: " + names_of(registry) + ")");
}

}  // namespace mpisgd
