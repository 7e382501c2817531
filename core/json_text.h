// Text for hand-written JSON output: the one string escaper the CLI and the
// tools share.
#ifndef TASO_CORE_JSON_TEXT_H_
#define TASO_CORE_JSON_TEXT_H_

#include <cstdio>
#include <string>

namespace taso {

// `s` escaped for use between JSON double quotes.
inline std::string JsonEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof(buf), "\\u%04x", static_cast<unsigned>(c));
          out += buf;
        } else {
          out += c;
        }
    }
  }
  return out;
}

}  // namespace taso

#endif  // TASO_CORE_JSON_TEXT_H_
