// ONNX models (`taso optimize`, the optimizer service; optimizer/onnx): any
// bytes import or get an error, never a crash, and an imported graph is
// valid.
#include <cstdint>
#include <string>

#include "fuzz/fuzz_check.h"
#include "onnx_io/onnx_import.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > (1 << 20)) return 0;
  taso::OnnxImportOptions options;
  options.max_model_bytes = 1 << 20;
  auto model = taso::ImportOnnx(std::string(reinterpret_cast<const char*>(data), size), options);
  if (model.ok()) FUZZ_CHECK(model->graph.Validate().ok(), "an imported graph is not valid");
  return 0;
}
