#include "profiler/calibration.h"

#include <cmath>
#include <cstdint>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "nlohmann/json.hpp"

namespace taso::profiler {
namespace {

// FNV-1a: stable across processes and builds, unlike std::hash.
uint32_t Digest(const std::string& text) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  return static_cast<uint32_t>(h ^ (h >> 32));
}

}  // namespace

const std::string& DefaultCalibrationText() {
  static const std::string* text = new std::string(
#include "profiler/cpu_default_calibration.inc"
  );
  return *text;
}

absl::StatusOr<GraphCostModel> ParseCalibration(const std::string& text, const std::string& source) {
  const nlohmann::json json = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": not a JSON object (expected {\"name\": ..., "
                                                   "\"per_node_ms\": ..., \"per_mb_ms\": ...})"));
  }
  GraphCostModel model;
  for (const char* key : {"per_node_ms", "per_mb_ms"}) {
    auto it = json.find(key);
    if (it == json.end() || !it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(source, ": \"", key, "\" must be a finite number >= 0 (milliseconds)"));
    }
  }
  model.set_per_node_ms(json["per_node_ms"].get<double>());
  model.set_per_mb_ms(json["per_mb_ms"].get<double>());
  // Optional: runtimes that keep views free leave it out.
  if (auto it = json.find("materialized_view_mb_ms"); it != json.end()) {
    if (!it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(source, ": \"materialized_view_mb_ms\" must be a finite number >= 0 (milliseconds per MB)"));
    }
    model.set_materialized_view_mb_ms(it->get<double>());
  }
  auto name = json.find("name");
  if (name == json.end() || !name->is_string() || name->get<std::string>().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": \"name\" must be a non-empty string"));
  }
  model.set_calibration_id(absl::StrFormat("%s@%08x", name->get<std::string>(), Digest(text)));
  return model;
}

absl::StatusOr<GraphCostModel> LoadCalibration(const std::string& flag) {
  if (flag.empty()) return ParseCalibration(DefaultCalibrationText(), "the embedded cpu calibration");
  if (flag == "none") {
    GraphCostModel none;
    none.set_calibration_id("none");
    return none;
  }
  std::ifstream in(flag);
  if (!in) return absl::InvalidArgumentError(absl::StrCat("cannot read the calibration file ", flag));
  std::stringstream text;
  text << in.rdbuf();
  return ParseCalibration(text.str(), flag);
}

}  // namespace taso::profiler
