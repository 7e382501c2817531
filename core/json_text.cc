#include "core/json_text.h"

#include <cmath>

namespace taso {
namespace {

void Append(const Json& value, std::string& out) {
  if (value.is_object()) {
    out += '{';
    const char* separator = "";
    for (auto it = value.begin(); it != value.end(); ++it) {
      out += separator;
      out += Json(it.key()).dump();
      out += ": ";
      Append(it.value(), out);
      separator = ", ";
    }
    out += '}';
  } else if (value.is_array()) {
    out += '[';
    const char* separator = "";
    for (const Json& element : value) {
      out += separator;
      Append(element, out);
      separator = ", ";
    }
    out += ']';
  } else {
    // Invalid UTF-8 (a corrupt name) is replaced rather than thrown about.
    out += value.dump(-1, ' ', false, Json::error_handler_t::replace);
  }
}

}  // namespace

std::string JsonLine(const Json& value) {
  std::string out;
  Append(value, out);
  return out;
}

double RoundTo(double value, int decimals) {
  const double scale = std::pow(10.0, decimals);
  return std::round(value * scale) / scale;
}

}  // namespace taso
