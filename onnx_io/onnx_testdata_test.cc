// Every conformance model of Debian's libonnx-testdata: import never crashes
// and either succeeds or fails with a clear InvalidArgument/Unimplemented;
// an imported model exports to a model that passes the ONNX checker; and
// where the IR can evaluate the model (no opaque nodes, float32 only) its
// outputs match the reference outputs, before and after a round trip.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/interpreter.h"
#include "onnx_io/onnx_export.h"
#include "onnx_io/onnx_import.h"
#include "gtest/gtest.h"
#include "onnx/checker.h"
#include "onnx/onnx_pb.h"

namespace taso {
namespace {

namespace fs = std::filesystem;
constexpr char kDataDir[] = "/usr/share/libonnx-testdata/data";
constexpr double kTolerance = 1e-4;  // absolute and relative

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Counts {
  int models = 0, imported = 0, opaque_containing = 0, round_tripped = 0;
  int outputs_checked = 0, not_evaluable = 0, clear_errors = 0;
  std::vector<std::string> failures;
  std::map<std::string, int> error_kinds;  // first words of clear errors, for the summary
  std::map<std::string, int> opaque_ops;   // "domain::OpType" -> models where it stayed opaque
};

// A float32 tensor proto as interpreter input; false for other element types.
bool ToFloatTensor(const onnx::TensorProto& t, FloatTensor& out) {
  if (t.data_type() != onnx::TensorProto::FLOAT) return false;
  std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
  out.type = TensorType::RowMajor(DType::kFloat32, dims);
  const int64_t n = out.type.num_elements();
  out.data.resize(n);
  if (t.has_raw_data()) {
    if (static_cast<int64_t>(t.raw_data().size()) != n * 4) return false;
    std::memcpy(out.data.data(), t.raw_data().data(), n * 4);
  } else {
    if (t.float_data_size() != n) return false;
    std::copy(t.float_data().begin(), t.float_data().end(), out.data.begin());
  }
  return true;
}

bool LoadTensor(const fs::path& path, onnx::TensorProto& t) { return t.ParseFromString(ReadFile(path)); }

// The reference data of test_data_set_0, in graph input / output order.
struct Reference {
  std::vector<onnx::TensorProto> inputs, outputs;
};

bool LoadReference(const fs::path& dir, Reference& ref) {
  const fs::path set = dir / "test_data_set_0";
  if (!fs::exists(set)) return false;
  for (int i = 0;; ++i) {
    const fs::path p = set / ("input_" + std::to_string(i) + ".pb");
    if (!fs::exists(p)) break;
    if (!LoadTensor(p, ref.inputs.emplace_back())) return false;
  }
  for (int i = 0;; ++i) {
    const fs::path p = set / ("output_" + std::to_string(i) + ".pb");
    if (!fs::exists(p)) break;
    if (!LoadTensor(p, ref.outputs.emplace_back())) return false;
  }
  return true;
}

// Names of the graph inputs that are not initializers, in order.
std::vector<std::string> TrueInputs(const onnx::ModelProto& model) {
  std::set<std::string> inits;
  for (const auto& t : model.graph().initializer()) inits.insert(t.name());
  std::vector<std::string> names;
  for (const auto& in : model.graph().input()) {
    if (!inits.count(in.name())) names.push_back(in.name());
  }
  return names;
}

// Evaluates `graph` on the reference inputs and compares with the reference
// outputs. Returns "" on a match, else what differs.
std::string CheckOutputs(const Graph& graph, const std::vector<std::string>& input_names, const Reference& ref) {
  std::map<std::string, FloatTensor> feeds;
  for (size_t i = 0; i < input_names.size() && i < ref.inputs.size(); ++i) {
    if (!ToFloatTensor(ref.inputs[i], feeds[input_names[i]])) return "reference input is not float32";
  }
  auto got = EvaluateFloat(graph, feeds);
  if (!got.ok()) return "evaluation failed: " + std::string(got.status().message());
  if (got->size() != ref.outputs.size()) return "output count differs from the reference";
  for (size_t i = 0; i < got->size(); ++i) {
    FloatTensor want;
    if (!ToFloatTensor(ref.outputs[i], want)) return "reference output is not float32";
    const FloatTensor& have = (*got)[i];
    if (have.type.dims != want.type.dims) {
      return "output " + std::to_string(i) + " has shape " + DimsToString(have.type.dims) + ", reference " +
             DimsToString(want.type.dims);
    }
    for (size_t k = 0; k < want.data.size(); ++k) {
      const double a = have.data[k], b = want.data[k];
      if (std::isnan(a) && std::isnan(b)) continue;
      if (!(std::fabs(a - b) <= kTolerance + kTolerance * std::fabs(b))) {
        return "output " + std::to_string(i) + " element " + std::to_string(k) + " is " + std::to_string(a) +
               ", reference " + std::to_string(b);
      }
    }
  }
  return "";
}

std::multiset<std::string> OpaqueOps(const Graph& graph) {
  std::multiset<std::string> ops;
  for (const Node& n : graph.nodes()) {
    if (n.kind == OpKind::kOpaque) ops.insert(n.params.opaque.domain + "::" + n.params.opaque.op_type);
  }
  return ops;
}

bool Evaluable(const Graph& graph) {
  for (const Node& n : graph.nodes()) {
    if (n.kind == OpKind::kOpaque) return false;
    for (const TensorType& t : n.output_types) {
      if (t.dtype != DType::kFloat32) return false;  // the float interpreter's domain
    }
  }
  return true;
}

// The model with its true inputs' shapes set to the reference inputs' (for
// models whose symbolic dimensions the reference data sizes differently).
std::string SpecializeInputs(const onnx::ModelProto& model, const Reference& ref) {
  onnx::ModelProto m = model;
  std::set<std::string> inits;
  for (const auto& t : m.graph().initializer()) inits.insert(t.name());
  size_t k = 0;
  for (auto& in : *m.mutable_graph()->mutable_input()) {
    if (inits.count(in.name()) || k >= ref.inputs.size()) continue;
    auto* shape = in.mutable_type()->mutable_tensor_type()->mutable_shape();
    shape->clear_dim();
    for (int64_t d : ref.inputs[k].dims()) shape->add_dim()->set_dim_value(d);
    ++k;
  }
  return m.SerializeAsString();
}

void CheckModel(const fs::path& path, Counts& c) {
  ++c.models;
  const std::string name = fs::relative(path.parent_path(), kDataDir).string();
  auto fail = [&](const std::string& why) { c.failures.push_back(name + ": " + why); };
  const std::string bytes = ReadFile(path);
  auto imported = ImportOnnx(bytes);
  if (!imported.ok()) {
    const absl::StatusCode code = imported.status().code();
    if ((code == absl::StatusCode::kInvalidArgument || code == absl::StatusCode::kUnimplemented) &&
        !imported.status().message().empty()) {
      ++c.clear_errors;
      const std::string msg(imported.status().message());
      ++c.error_kinds[msg.substr(0, std::min<size_t>(msg.find_first_of(":'"), 60))];
      std::cout << "  clear error  " << name << ": " << msg.substr(0, 200) << "\n";
    } else {
      fail("unclear import error: " + imported.status().ToString());
    }
    return;
  }
  ++c.imported;
  const bool evaluable = Evaluable(imported->graph);
  if (!imported->opaque_ops_seen.empty()) ++c.opaque_containing;
  for (const std::string& op : imported->opaque_ops_seen) ++c.opaque_ops[op];
  if (getenv("ONNX_TESTDATA_VERBOSE")) {
    std::cout << "  imported     " << name << ":";
    for (const std::string& op : imported->opaque_ops_seen) std::cout << " " << op;
    std::cout << "\n";
  }
  auto exported = ExportOnnx(*imported, imported->graph);
  if (!exported.ok()) return fail("export failed: " + exported.status().ToString());
  onnx::ModelProto reparsed;
  if (!reparsed.ParseFromString(*exported)) return fail("exported bytes do not parse");
  try {
    onnx::checker::check_model(reparsed);
  } catch (const std::exception& e) {
    return fail(std::string("exported model fails the checker: ") + e.what());
  }
  auto reimported = ImportOnnx(*exported);
  if (!reimported.ok()) return fail("re-import failed: " + reimported.status().ToString());
  // Nothing dropped: the same opaque operators, as many of each.
  if (OpaqueOps(reimported->graph) != OpaqueOps(imported->graph)) return fail("opaque nodes differ after a round trip");
  ++c.round_tripped;
  if (!evaluable) {
    ++c.not_evaluable;
    return;
  }
  Reference ref;
  if (!LoadReference(path.parent_path(), ref)) return fail("cannot read test_data_set_0");
  onnx::ModelProto original;
  original.ParseFromString(bytes);
  const std::vector<std::string> inputs = TrueInputs(original);
  std::string diff = CheckOutputs(imported->graph, inputs, ref);
  if (diff.rfind("evaluation failed: feed for", 0) == 0) {
    // Symbolic dimensions were imported as 1; the reference uses other sizes.
    auto specialized = ImportOnnx(SpecializeInputs(original, ref));
    if (!specialized.ok()) return fail("specialized import failed: " + specialized.status().ToString());
    imported = std::move(specialized);
    exported = ExportOnnx(*imported, imported->graph);
    if (!exported.ok()) return fail("specialized export failed: " + exported.status().ToString());
    reimported = ImportOnnx(*exported);
    if (!reimported.ok()) return fail("specialized re-import failed: " + reimported.status().ToString());
    diff = CheckOutputs(imported->graph, inputs, ref);
  }
  if (!diff.empty()) return fail("imported graph: " + diff);
  diff = CheckOutputs(reimported->graph, inputs, ref);
  if (!diff.empty()) return fail("after export and re-import: " + diff);
  ++c.outputs_checked;
}

TEST(OnnxTestdataTest, EveryConformanceModel) {
  if (!fs::is_directory(kDataDir)) {
    GTEST_SKIP() << kDataDir << " is absent: install Debian's libonnx-testdata (deploy/setup.sh does)";
  }
  std::vector<fs::path> models;
  for (const auto& entry : fs::recursive_directory_iterator(kDataDir)) {
    if (entry.path().filename() == "model.onnx") models.push_back(entry.path());
  }
  std::sort(models.begin(), models.end());
  Counts c;
  for (const fs::path& p : models) CheckModel(p, c);
  std::cout << "\nopaque operators (number of models):";
  for (const auto& [op, n] : c.opaque_ops) std::cout << " " << op << " " << n << ";";
  std::cout << "\n\nclear errors by kind:\n";
  for (const auto& [kind, n] : c.error_kinds) std::cout << "  " << n << "  " << kind << "\n";
  for (const std::string& f : c.failures) std::cout << "FAILURE " << f << "\n";
  std::cout << "\nmodels " << c.models << ", imported " << c.imported << ", opaque-containing "
            << c.opaque_containing << ", round-tripped " << c.round_tripped << ", outputs checked "
            << c.outputs_checked << " (not evaluable: " << c.not_evaluable << "), clear errors " << c.clear_errors
            << ", failures " << c.failures.size() << "\n";
  // Pinned (Debian's libonnx-testdata 1.12.0): an import regression moves a
  // model from "imported" to "clear errors", which must fail here, not pass
  // as a clear error. Raise the floors when the importer learns more.
  EXPECT_EQ(c.models, 1072);
  EXPECT_GE(c.imported, 1041);
  EXPECT_LE(c.clear_errors, 31);
  EXPECT_GE(c.outputs_checked, 126);
  EXPECT_TRUE(c.failures.empty()) << c.failures.size() << " models failed; first: " << c.failures.front();
}

}  // namespace
}  // namespace taso
