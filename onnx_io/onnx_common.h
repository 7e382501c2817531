// Helpers shared by the ONNX importer and exporter: element types, tensor
// bytes, attributes, and the ONNX library's checker behind a Status (the
// library reports errors by throwing; nothing thrown may cross our APIs).
#ifndef TASO_ONNX_IO_ONNX_COMMON_H_
#define TASO_ONNX_IO_ONNX_COMMON_H_

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/tensor_type.h"
#include "onnx/onnx_pb.h"

namespace taso::onnx_internal {

// The element types the IR can hold; nullopt for the others (double, int8,
// string, ...), which only opaque operators may touch.
std::optional<DType> DTypeFromOnnx(int32_t elem_type);
int32_t OnnxElemType(DType dtype);
// Bytes per element of an IR-representable dtype.
int64_t DTypeBytes(DType dtype);

bool IsDefaultDomain(const std::string& domain);
// The opset version of the default (ai.onnx) domain, 0 when not imported.
int64_t DefaultOpset(const onnx::ModelProto& model);
// The version of `domain`'s operator set the model imports ("" and "ai.onnx"
// are one domain), 0 when not imported.
int64_t DomainOpset(const onnx::ModelProto& model, const std::string& domain);

// "node 'conv1' (Conv)" or "node #3 (Conv)" for nodes without a name.
std::string DescribeOnnxNode(const onnx::NodeProto& node, int index);

// Elements of a tensor proto, -1 if a dimension is negative.
int64_t NumElements(const onnx::TensorProto& tensor);
bool HasExternalData(const onnx::TensorProto& tensor);
// Whether the IR can hold `tensor` as a weight with data: a supported element
// type, every dimension >= 1, data inline and of the right size.
bool IsRepresentableConstant(const onnx::TensorProto& tensor);
// The tensor's values as raw little-endian bytes of its element type.
absl::StatusOr<std::string> TensorBytes(const onnx::TensorProto& tensor);
// The values of an int64 or int32 tensor (shape and size operands).
absl::StatusOr<std::vector<int64_t>> TensorInts(const onnx::TensorProto& tensor);
// The tensor a Constant node produces, built from whichever value_* attribute
// it carries; nullopt for sparse or otherwise unusual values.
std::optional<onnx::TensorProto> ConstantNodeValue(const onnx::NodeProto& node);

const onnx::AttributeProto* FindAttribute(const onnx::NodeProto& node, const std::string& name);
int64_t IntAttribute(const onnx::NodeProto& node, const std::string& name, int64_t fallback);
float FloatAttribute(const onnx::NodeProto& node, const std::string& name, float fallback);
std::string StringAttribute(const onnx::NodeProto& node, const std::string& name, const std::string& fallback);
// Empty when absent.
std::vector<int64_t> IntsAttribute(const onnx::NodeProto& node, const std::string& name);
onnx::AttributeProto MakeIntAttribute(const std::string& name, int64_t value);
onnx::AttributeProto MakeIntsAttribute(const std::string& name, const std::vector<int64_t>& values);
onnx::AttributeProto MakeFloatAttribute(const std::string& name, float value);
onnx::AttributeProto MakeStringAttribute(const std::string& name, const std::string& value);
onnx::AttributeProto MakeTensorAttribute(const std::string& name, const onnx::TensorProto& value);

// Names a graph reads from enclosing scopes: used by its nodes (and, through
// them, by nested subgraphs) but defined by none of its inputs, initializers
// or nodes. This is how If/Loop/Scan bodies depend on outer values.
std::set<std::string> OuterScopeNames(const onnx::GraphProto& graph);
// The same for all subgraph attributes of one node.
std::set<std::string> NodeOuterScopeNames(const onnx::NodeProto& node);
// Every value name mentioned anywhere in the graph, subgraphs included.
void CollectValueNames(const onnx::GraphProto& graph, std::set<std::string>& names);

// Parses a serialized ModelProto of up to 2 GiB (protobuf's most; its
// default stream limit is lower). InvalidArgument "over 2 GiB", or
// `not_a_model` when the bytes do not parse.
absl::StatusOr<onnx::ModelProto> ParseModelBytes(const std::string& bytes, const std::string& not_a_model);

// Removes every attribute named `name` from `node`.
void EraseAttribute(onnx::NodeProto& node, const std::string& name);

// Runs onnx::checker::check_model; a failure is InvalidArgument carrying the
// checker's message. Never throws.
absl::Status RunOnnxChecker(const onnx::ModelProto& model);

}  // namespace taso::onnx_internal

#endif  // TASO_ONNX_IO_ONNX_COMMON_H_
