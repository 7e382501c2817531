// JSON the tools print (--json): built as nlohmann::ordered_json, so keys
// keep the order they are written in and strings are escaped by the
// library, and printed on one line with ", " and ": " between items, the
// layout scripts matching `"key": value` have always read.
#ifndef TASO_CORE_JSON_TEXT_H_
#define TASO_CORE_JSON_TEXT_H_

#include <string>

#include <nlohmann/json.hpp>

namespace taso {

using Json = nlohmann::ordered_json;

// `value` on one line: {"a": 1, "b": [2, 3]}.
std::string JsonLine(const Json& value);

// `value` rounded to `decimals` places, for a number printed as "%.3f" was.
double RoundTo(double value, int decimals);

}  // namespace taso

#endif  // TASO_CORE_JSON_TEXT_H_
