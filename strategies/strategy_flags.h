#pragma once
// The strategies' own settings. Each family of strategies keeps its settings in structs
// of its own (the parameter servers' ParameterServerConfig, top-k's SparsifyOptions, ...),
// declares the flags that fill them (StrategyFamily::declare_flags) and reads them back
// when it checks its flags and builds a strategy. The job carries the lot without knowing
// what is inside, so a new family adds no field to the job's configuration.
#include <any>
#include <map>
#include <typeindex>
#include <typeinfo>

namespace mpisgd {

class StrategyFlags {
 public:
  // The settings of type S, made with their defaults on first use. The reference stays
  // valid as long as this object does (flags are bound to it).
  template <class S>
  S& get() {
    std::any& slot = by_type_[std::type_index(typeid(S))];
    if (!slot.has_value()) slot.emplace<S>();
    return std::any_cast<S&>(slot);
  }
  // The settings of type S, or their defaults where nothing set them.
  template <class S>
  const S& get() const {
    static const S defaults{};
    const auto it = by_type_.find(std::type_index(typeid(S)));
    return it == by_type_.end() ? defaults : std::any_cast<const S&>(it->second);
  }

 private:
  std::map<std::type_index, std::any> by_type_;
};

}  // namespace mpisgd
