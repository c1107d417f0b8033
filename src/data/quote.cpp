#include "data/quote.h"

namespace mpisgd {

std::string quote_input(std::string_view token) {
  std::string q = "'";
  for (const char c : token.substr(0, 40)) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x7f) {
      q += c;
    } else {
      constexpr char hex[] = "0123456789abcdef";
      q += {'\\', 'x', hex[byte >> 4], hex[byte & 15]};
    }
  }
  q.append(token.size() > 40 ? "...'" : "'");
  return q;
}

}  // namespace mpisgd
