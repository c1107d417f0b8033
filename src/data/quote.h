#pragma once
// How error messages show a piece of input: its first 40 bytes in quotes, with control
// and non-ASCII bytes written as \xHH. A NUL would cut the message short where it is
// printed, an ESC would drive the terminal, and a stray byte would not be seen at all.
#include <string>
#include <string_view>

namespace mpisgd {

std::string quote_input(std::string_view token);

}  // namespace mpisgd
