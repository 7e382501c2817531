// The IR back to ONNX, inside the metadata of the model it was imported from.
#ifndef TASO_ONNX_IO_ONNX_EXPORT_H_
#define TASO_ONNX_IO_ONNX_EXPORT_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "core/graph.h"
#include "onnx_io/onnx_external_data.h"
#include "onnx_io/onnx_import.h"

namespace taso {

// Serializes `graph` (normally an optimized model.graph: the same graph
// inputs and outputs by name) as an ONNX ModelProto with `model`'s metadata,
// opset imports, graph inputs and outputs (names, order, declared types).
// One ONNX node per IR node in topological order, plus Constant helpers
// (shapes, split sizes) and Identity nodes where a graph output or a subgraph
// needs a value under a fixed name. Opaque nodes come back as they were
// imported. The result passes onnx::checker::check_model; a model that would
// not is InternalError with the checker's message. With `sink`, tensors of
// sink->min_bytes or more are written to sink->data as external data (the
// way to export a model larger than the 2 GiB one message holds).
//
// `dialect` says which operators the runtime that loads the result knows:
// standard ONNX writes a fused operator as the standard operators it stands
// for (fused_gemm: Gemm and its activation); kOnnxRuntime writes ONNX
// Runtime's own contrib operator (com.microsoft FusedGemm), importing that
// domain, and the model then runs in ONNX Runtime only.
enum class OnnxDialect { kStandard, kOnnxRuntime };
absl::StatusOr<std::string> ExportOnnx(const OnnxModel& model, const Graph& graph,
                                       OnnxExternalSink* sink = nullptr,
                                       OnnxDialect dialect = OnnxDialect::kStandard);

// Serializes a graph that was not imported (a profiler's timing graph) as a
// model of its own: opset `opset`, its inputs and outputs by the IR's names
// and types. Every weight must carry data (InvalidArgument naming it if not).
absl::StatusOr<std::string> ExportStandaloneOnnx(const Graph& graph, int64_t opset = 13,
                                                 OnnxDialect dialect = OnnxDialect::kStandard);

}  // namespace taso

#endif  // TASO_ONNX_IO_ONNX_EXPORT_H_
