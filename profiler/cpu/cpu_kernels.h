// oneDNN kernels for the operators of the IR: one Kernel per canonical
// signature, holding its primitives and its memories. Internal to the CPU
// backend; oneDNN's C++ API throws dnnl::error, and every function here that
// can throw is called under CatchDnnl, which turns it into a Status.
#ifndef TASO_PROFILER_CPU_CPU_KERNELS_H_
#define TASO_PROFILER_CPU_CPU_KERNELS_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/status/statusor.h"
#include "core/interpreter.h"
#include "oneapi/dnnl/dnnl.hpp"
#include "costs/signature.h"

namespace taso::profiler::cpu {

// `m` seen with `dims` (leading unit dimensions added or dropped), over the
// same buffer; nullopt when its layout cannot be read that way.
std::optional<dnnl::memory> ViewWithDims(const dnnl::memory& m, const dnnl::memory::dims& dims);

// Runs `fn`, converting a dnnl::error (or std::exception) into a Status.
absl::Status CatchDnnl(const std::function<absl::Status()>& fn);

class Kernel {
 public:
  // Builds primitives and allocates memories for `signature`. Unimplemented
  // for what oneDNN (or this mapping) cannot run, naming the reason.
  //
  // `sources` (optional, one per input; an empty memory for none) are buffers
  // a caller already holds the inputs in, e.g. a graph runner's tensors. An
  // input whose port would have the source's layout (after dropping or adding
  // leading unit dimensions) reads that buffer directly: no copy, and views
  // (transpose, reshape) alias it. input_bound(i) says which did.
  static absl::StatusOr<std::unique_ptr<Kernel>> Build(const CanonicalSignature& signature,
                                                       const dnnl::engine& engine,
                                                       const std::vector<dnnl::memory>& sources = {});

  // Copies logical row-major values into the kernel's inputs (reordering into
  // the kernel's layouts, which zeroes any blocked padding). Not timed.
  absl::Status LoadInputs(const std::vector<FloatTensor>& inputs, dnnl::stream& stream);
  // The timed work: every step of the operator, then a stream wait.
  void Run(dnnl::stream& stream);
  // The outputs in logical row-major order. Not timed.
  absl::StatusOr<std::vector<FloatTensor>> ReadOutputs(dnnl::stream& stream);

  // One input from logical row-major values (a weight a runtime reorders
  // once at load). Not timed.
  absl::Status LoadInput(int index, const FloatTensor& value, dnnl::stream& stream);

  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  // The memories the primitives read and write, in the kernel's layouts.
  const dnnl::memory& input_memory(int i) const { return inputs_[i].memory; }
  const dnnl::memory& output_memory(int i) const { return outputs_[i].memory; }
  bool input_bound(int i) const { return bound_[i]; }

  // True when the operator is a view: no kernel runs, the cost is 0.
  bool is_view() const { return steps_.empty(); }
  // oneDNN's implementation names, e.g. "brgconv:avx512_core".
  const std::string& implementation() const { return implementation_; }

 private:
  struct Port {
    TensorType type;                // as in the signature
    dnnl::memory memory;            // in the kernel's layout
    dnnl::memory::desc logical_md;  // row-major over the kernel's dims
  };
  using Step = std::function<void(dnnl::stream&)>;

  explicit Kernel(const dnnl::engine& engine) : engine_(engine) {}
  // Points each input port at its source where the layouts agree. Every
  // builder calls it right after creating inputs_, before anything (a view,
  // a sub-memory) is made over an input's buffer.
  void BindInputs();
  // The layout element-wise operators run in: the sources' own when every
  // input has a source of that one layout and the output's dims, so a
  // runtime keeps a convolution's blocked layout through a residual add.
  std::optional<dnnl::memory::desc> SharedSourceLayout(const dnnl::memory::dims& dims) const;
  absl::Status BuildSteps(const CanonicalSignature& signature);
  void AddPrimitive(const dnnl::primitive& primitive, std::unordered_map<int, dnnl::memory> args,
                    const char* impl);
  void AddReorder(const dnnl::memory& from, const dnnl::memory& to);
  void AddZeroFill(const dnnl::memory& memory);

  // Op-specific builders; each sets inputs_ and outputs_ memories.
  absl::Status BuildConv(const CanonicalSignature& s);
  absl::Status BuildMatMul(const CanonicalSignature& s);  // and fused_gemm
  absl::Status BuildBinary(const CanonicalSignature& s);
  absl::Status BuildEltwise(const CanonicalSignature& s);
  absl::Status BuildPool(const CanonicalSignature& s);
  absl::Status BuildConcat(const CanonicalSignature& s);
  absl::Status BuildSplit(const CanonicalSignature& s);
  absl::Status BuildTranspose(const CanonicalSignature& s);
  absl::Status BuildReshape(const CanonicalSignature& s);
  absl::Status BuildEnlarge(const CanonicalSignature& s);
  absl::Status BuildMergeGConv(const CanonicalSignature& s);
  absl::Status BuildBatchNorm(const CanonicalSignature& s);

  // Ports whose memory has the type's own layout, padded to `rank` dims.
  Port PlainPort(const TensorType& type, int rank);
  // A port over the same dims whose memory uses `kernel_md` (e.g. a layout
  // oneDNN chose): allocated, or over `buffer` (a view of another port's).
  Port KernelPort(const TensorType& type, const dnnl::memory::dims& dims,
                  const dnnl::memory::desc& kernel_md, void* buffer = nullptr);

  dnnl::engine engine_;
  std::vector<dnnl::memory> sources_;
  std::vector<bool> bound_;
  std::vector<Port> inputs_;
  std::vector<Port> outputs_;
  std::vector<Step> steps_;
  std::string implementation_;
};

}  // namespace taso::profiler::cpu

#endif  // TASO_PROFILER_CPU_CPU_KERNELS_H_
