// The cpu backend's calibration: the parameters of its graph cost model
// (graph_cost_model.h), fitted by bench/calibrate.sh against ONNX Runtime.
// The default (profiler/cpu/calibration/cpu_default.json) is compiled into the
// binary, so no file has to be found at run time; `--calibration FILE`
// replaces it. The calibration's id carries a digest of its text and is part
// of the cpu device identity, so costs cached under one calibration are never
// served under another.
#ifndef TASO_PROFILER_CPU_CALIBRATION_H_
#define TASO_PROFILER_CPU_CALIBRATION_H_

#include <string>

#include "absl/status/statusor.h"
#include "proto/profiler.pb.h"

namespace taso::profiler {

// Which backend's graph cost model a calibration is read for. The cpu
// backend's is every term; the ort backend times operators in ONNX Runtime
// itself, so only the weight term applies, with its own measurement.
enum class CalibratedBackend { kCpu, kOrt };

// Parses calibration JSON: {"name": "...", "per_node_ms": x, "per_mb_ms": y,
// "weights": {"stream_mb_ms": z, "spill": [[fraction, paid], ...]},
// "ort_weights": {...}} (the weight terms are optional; other keys, such as
// the fit's figures, are kept in the file only). The id is "name@" + 8 hex
// digits of a digest of `text`. InvalidArgument naming `source` and the
// problem for anything else.
absl::StatusOr<GraphCostModel> ParseCalibration(const std::string& text, const std::string& source,
                                                CalibratedBackend backend = CalibratedBackend::kCpu);

// What a --calibration flag selects: "" the embedded default, "none" no
// calibration (plain sums of kernel times), else a JSON file. A calibration
// with a weight term gets this machine's last-level cache size with it.
absl::StatusOr<GraphCostModel> LoadCalibration(const std::string& flag,
                                               CalibratedBackend backend = CalibratedBackend::kCpu);

// The embedded default's text.
const std::string& DefaultCalibrationText();

}  // namespace taso::profiler

#endif  // TASO_PROFILER_CPU_CALIBRATION_H_
