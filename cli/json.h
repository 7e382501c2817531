// The little JSON the commands print by hand (their reports are flat).
#ifndef TASO_CLI_JSON_H_
#define TASO_CLI_JSON_H_

#include <string>

namespace taso::cli {

// `s` escaped for use between double quotes in JSON.
std::string JsonEscape(const std::string& s);

}  // namespace taso::cli

#endif  // TASO_CLI_JSON_H_
