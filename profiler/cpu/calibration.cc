#include "profiler/cpu/calibration.h"

#include <cmath>
#include <cstdint>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "nlohmann/json.hpp"
#include "profiler/cpu/cache_size.h"

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

// The weight term of one backend, from {"stream_mb_ms": x, "spill": [[fraction,
// paid], ...]} under `key` (optional: absent leaves the term off).
absl::Status ParseWeightTerm(const nlohmann::json& json, const char* key, const std::string& source,
                             GraphCostModel& model) {
  auto it = json.find(key);
  if (it == json.end()) return absl::OkStatus();
  const std::string where = absl::StrCat(source, ": \"", key, "\"");
  auto bad = [&](const std::string& what) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, " ", what, " (expected {\"stream_mb_ms\": x, \"spill\": [[fraction of the cache, share paid], ...]}, "
        "as `taso profile memory` prints)"));
  };
  if (!it->is_object()) return bad("must be an object");
  auto rate = it->find("stream_mb_ms");
  if (rate == it->end() || !rate->is_number() || !std::isfinite(rate->get<double>()) || rate->get<double>() < 0) {
    return bad("needs \"stream_mb_ms\", a finite number >= 0");
  }
  auto spill = it->find("spill");
  if (spill == it->end() || !spill->is_array() || spill->empty()) return bad("needs a non-empty \"spill\" list");
  double last = -1;
  for (const auto& point : *spill) {
    if (!point.is_array() || point.size() != 2 || !point[0].is_number() || !point[1].is_number()) {
      return bad("has a \"spill\" point that is not [fraction, paid]");
    }
    const double fraction = point[0].get<double>(), paid = point[1].get<double>();
    if (!std::isfinite(fraction) || fraction <= last || !(paid >= 0 && paid <= 1)) {
      return bad("needs \"spill\" fractions increasing and shares paid in [0, 1]");
    }
    last = fraction;
    model.add_weight_spill_fraction(fraction);
    model.add_weight_spill_paid(paid);
  }
  model.set_weight_stream_mb_ms(rate->get<double>());
  return absl::OkStatus();
}

}  // namespace

const std::string& DefaultCalibrationText() {
  static const std::string* text = new std::string(
#include "profiler/cpu/cpu_default_calibration.inc"
  );
  return *text;
}

absl::StatusOr<GraphCostModel> ParseCalibration(const std::string& text, const std::string& source,
                                                CalibratedBackend backend) {
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
  // Both backends' weight terms are checked whichever is asked for: a file
  // that is wrong is wrong for both.
  GraphCostModel cpu_weights, ort_weights;
  if (absl::Status s = ParseWeightTerm(json, "weights", source, cpu_weights); !s.ok()) return s;
  if (absl::Status s = ParseWeightTerm(json, "ort_weights", source, ort_weights); !s.ok()) return s;
  if (backend == CalibratedBackend::kOrt) {
    // ORT's operator times already include what it pays between kernels.
    model = std::move(ort_weights);
  } else {
    model.MergeFrom(cpu_weights);
  }
  auto name = json.find("name");
  if (name == json.end() || !name->is_string() || name->get<std::string>().empty()) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": \"name\" must be a non-empty string"));
  }
  model.set_calibration_id(absl::StrFormat("%s@%08x", name->get<std::string>(), Digest(text)));
  return model;
}

absl::StatusOr<GraphCostModel> LoadCalibration(const std::string& flag, CalibratedBackend backend) {
  if (flag == "none") {
    GraphCostModel none;
    none.set_calibration_id("none");
    return none;
  }
  absl::StatusOr<GraphCostModel> model;
  if (flag.empty()) {
    model = ParseCalibration(DefaultCalibrationText(), "the embedded cpu calibration", backend);
  } else {
    std::ifstream in(flag);
    if (!in) return absl::InvalidArgumentError(absl::StrCat("cannot read the calibration file ", flag));
    std::stringstream text;
    text << in.rdbuf();
    model = ParseCalibration(text.str(), flag, backend);
  }
  if (model.ok() && model->weight_stream_mb_ms() > 0) model->set_weight_cache_bytes(LastLevelCacheBytes());
  return model;
}

}  // namespace taso::profiler
