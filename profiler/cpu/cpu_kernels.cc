#include "profiler/cpu/cpu_kernels.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/op_registry.h"

namespace taso::profiler::cpu {
namespace {

using dnnl::algorithm;
using dnnl::memory;
using dnnl::prop_kind;
using dt = dnnl::memory::data_type;

constexpr int kMaxRank = DNNL_MAX_NDIMS;

absl::Status FromDnnl(const dnnl::error& e) {
  const std::string message = absl::StrCat("oneDNN: ", e.what());
  switch (e.status) {
    case dnnl_unimplemented:
      return absl::UnimplementedError(message);
    case dnnl_invalid_arguments:
      return absl::InvalidArgumentError(message);
    case dnnl_out_of_memory:
      return absl::ResourceExhaustedError(message);
    default:
      return absl::InternalError(message);
  }
}

// dims padded on the left with 1s to `rank` (a 0-D tensor becomes {1}).
memory::dims PadDims(const std::vector<int64_t>& dims, int rank) {
  memory::dims out(std::max<int>(rank, 1) - dims.size(), 1);
  out.insert(out.end(), dims.begin(), dims.end());
  return out;
}

memory::dims PadStrides(const TensorType& t, int rank) {
  int64_t extent = 1;
  for (int i = 0; i < t.rank(); ++i) extent = std::max(extent, t.dims[i] * t.strides[i]);
  // A size-1 dimension's stride is never used; the extent keeps it legal.
  memory::dims out(std::max<int>(rank, 1) - t.rank(), extent);
  out.insert(out.end(), t.strides.begin(), t.strides.end());
  return out;
}

memory::dims RowMajor(const memory::dims& dims) {
  memory::dims strides(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) strides[i] = strides[i + 1] * dims[i + 1];
  return strides;
}

memory::desc StridedMd(const TensorType& t, int rank) {
  return memory::desc(PadDims(t.dims, rank), dt::f32, PadStrides(t, rank));
}

std::optional<algorithm> EltwiseFor(Activation a) {
  switch (a) {
    case Activation::kRelu: return algorithm::eltwise_relu;
    case Activation::kSigmoid: return algorithm::eltwise_logistic;
    case Activation::kTanh: return algorithm::eltwise_tanh;
    case Activation::kNone: break;
  }
  return std::nullopt;
}

dnnl::primitive_attr ActivationAttr(Activation a) {
  dnnl::primitive_attr attr;
  if (auto alg = EltwiseFor(a)) {
    dnnl::post_ops ops;
    ops.append_eltwise(1.f, *alg, 0.f, 0.f);
    attr.set_post_ops(ops);
  }
  return attr;
}

// Explicit padding of a sliding window, before and after.
struct Pads {
  int64_t before = 0;
  int64_t after = 0;
};

Pads WindowPads(const OpParams& p, int axis, int64_t in, int64_t kernel) {
  auto g = ComputeWindow(p, axis, in, kernel);
  if (!g.ok()) return {};
  return {g->pad_before, g->pad_after};
}

}  // namespace

std::optional<memory> ViewWithDims(const memory& m, const memory::dims& dims) {
  const memory::desc md = m.get_desc();
  if (md.dims() == dims) return m;
  try {
    return memory(md.reshape(dims), m.get_engine(), m.get_data_handle());
  } catch (const dnnl::error&) {
    return std::nullopt;  // e.g. a blocked layout whose blocked dimension would move
  }
}

absl::Status CatchDnnl(const std::function<absl::Status()>& fn) {
  try {
    return fn();
  } catch (const dnnl::error& e) {
    return FromDnnl(e);
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("oneDNN kernel: ", e.what()));
  }
}

Kernel::Port Kernel::PlainPort(const TensorType& type, int rank) {
  Port p;
  p.type = type;
  const memory::desc md = StridedMd(type, rank);
  p.memory = memory(md, engine_);
  const memory::dims dims = PadDims(type.dims, rank);
  p.logical_md = memory::desc(dims, dt::f32, RowMajor(dims));
  return p;
}

Kernel::Port Kernel::KernelPort(const TensorType& type, const memory::dims& dims,
                                const memory::desc& kernel_md, void* buffer) {
  Port p;
  p.type = type;
  p.memory = buffer != nullptr ? memory(kernel_md, engine_, buffer) : memory(kernel_md, engine_);
  p.logical_md = memory::desc(dims, dt::f32, RowMajor(dims));
  return p;
}

void Kernel::AddPrimitive(const dnnl::primitive& primitive, std::unordered_map<int, memory> args,
                          const char* impl) {
  steps_.push_back([primitive, args](dnnl::stream& s) { primitive.execute(s, args); });
  if (impl != nullptr && implementation_.find(impl) == std::string::npos) {
    implementation_ = implementation_.empty() ? impl : absl::StrCat(implementation_, "+", impl);
  }
}

void Kernel::AddReorder(const memory& from, const memory& to) {
  dnnl::reorder::primitive_desc pd(engine_, from.get_desc(), engine_, to.get_desc());
  AddPrimitive(dnnl::reorder(pd), {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}}, pd.impl_info_str());
}

void Kernel::AddZeroFill(const memory& m) {
  const size_t bytes = m.get_desc().get_size();
  steps_.push_back([m, bytes](dnnl::stream&) { std::memset(m.get_data_handle(), 0, bytes); });
}

absl::StatusOr<std::unique_ptr<Kernel>> Kernel::Build(const CanonicalSignature& signature,
                                                      const dnnl::engine& engine,
                                                      const std::vector<memory>& sources) {
  for (const TensorType& t : signature.op.inputs) {
    if (t.dtype != DType::kFloat32) {
      return absl::UnimplementedError(absl::StrCat("the cpu backend measures float32 tensors only, got ",
                                                   t.ToString()));
    }
    if (t.rank() > kMaxRank) {
      return absl::UnimplementedError(absl::StrCat("oneDNN handles at most ", kMaxRank, " dimensions"));
    }
  }
  std::unique_ptr<Kernel> kernel(new Kernel(engine));
  kernel->sources_ = sources;
  absl::Status s = CatchDnnl([&] { return kernel->BuildSteps(signature); });
  if (!s.ok()) return s;
  return kernel;
}

void Kernel::BindInputs() {
  bound_.assign(inputs_.size(), false);
  for (size_t i = 0; i < inputs_.size() && i < sources_.size(); ++i) {
    if (sources_[i].get(true) == nullptr) continue;
    const memory::desc want = inputs_[i].memory.get_desc();
    auto view = ViewWithDims(sources_[i], want.dims());
    if (!view || view->get_desc() != want) continue;
    inputs_[i].memory = memory(want, engine_, view->get_data_handle());
    bound_[i] = true;
  }
}

std::optional<memory::desc> Kernel::SharedSourceLayout(const memory::dims& dims) const {
  std::optional<memory::desc> shared;
  int64_t elements = 1;
  for (int64_t d : dims) elements *= d;
  for (const memory& source : sources_) {
    if (source.get(true) == nullptr) return std::nullopt;
    auto view = ViewWithDims(source, dims);
    if (!view) return std::nullopt;
    const memory::desc md = view->get_desc();
    // Only whole, dense buffers: a split part's strided view is no layout
    // to allocate an output in.
    const bool blocked = md.data.format_desc.blocking.inner_nblks > 0;
    if (md.data.offset0 != 0 || (!blocked && md.get_size() != elements * sizeof(float))) return std::nullopt;
    if (shared && *shared != md) return std::nullopt;
    shared = md;
  }
  return shared;
}

absl::Status Kernel::BuildSteps(const CanonicalSignature& s) {
  switch (s.op.kind) {
    case OpKind::kConv2D: return BuildConv(s);
    case OpKind::kMatMul:
    case OpKind::kFusedGemm: return BuildMatMul(s);
    case OpKind::kEwAdd:
    case OpKind::kEwMul:
    case OpKind::kScalarMul: return BuildBinary(s);
    case OpKind::kRelu:
    case OpKind::kTanh:
    case OpKind::kSigmoid: return BuildEltwise(s);
    case OpKind::kPoolAvg:
    case OpKind::kPoolMax: return BuildPool(s);
    case OpKind::kConcat: return BuildConcat(s);
    case OpKind::kSplit: return BuildSplit(s);
    case OpKind::kTranspose: return BuildTranspose(s);
    case OpKind::kReshape: return BuildReshape(s);
    case OpKind::kEnlarge: return BuildEnlarge(s);
    case OpKind::kMergeGConv: return BuildMergeGConv(s);
    case OpKind::kBatchNorm: return BuildBatchNorm(s);
    default:
      return absl::UnimplementedError(absl::StrCat("the cpu backend has no kernel for ",
                                                   OpKindName(s.op.kind)));
  }
}

absl::Status Kernel::BuildConv(const CanonicalSignature& s) {
  const OpParams& p = s.op.params;
  const TensorType& x = s.op.inputs[0];
  const TensorType& w = s.op.inputs[1];
  const TensorType& y = s.outputs[0];
  const int64_t groups = x.dims[1] / w.dims[1];
  const memory::dims src_dims = x.dims, dst_dims = y.dims;
  memory::dims w_dims = w.dims;
  if (groups > 1) w_dims = {groups, w.dims[0] / groups, w.dims[1], w.dims[2], w.dims[3]};
  const Pads ph = WindowPads(p, 0, x.dims[2], w.dims[2]);
  const Pads pw = WindowPads(p, 1, x.dims[3], w.dims[3]);
  const auto any = memory::format_tag::any;
  const memory::desc src_md(src_dims, dt::f32, any), w_md(w_dims, dt::f32, any), dst_md(dst_dims, dt::f32, any);
  // The optional bias (one value per output channel, grouped or not) is the
  // primitive's own bias: oneDNN adds it in the convolution's epilogue,
  // before the activation post-op, as act(conv(x, w) + bias) requires.
  const bool has_bias = s.op.inputs.size() > 2;
  const memory::dims bias_dims = {y.dims[1]};
  auto desc = has_bias ? dnnl::convolution_forward::desc(
                             prop_kind::forward_inference, algorithm::convolution_direct, src_md, w_md,
                             memory::desc(bias_dims, dt::f32, any), dst_md, {p.stride_h, p.stride_w},
                             {ph.before, pw.before}, {ph.after, pw.after})
                       : dnnl::convolution_forward::desc(prop_kind::forward_inference,
                                                         algorithm::convolution_direct, src_md, w_md, dst_md,
                                                         {p.stride_h, p.stride_w}, {ph.before, pw.before},
                                                         {ph.after, pw.after});
  dnnl::convolution_forward::primitive_desc pd(desc, ActivationAttr(p.activation), engine_);
  inputs_ = {KernelPort(x, src_dims, pd.src_desc()), KernelPort(w, w_dims, pd.weights_desc())};
  if (has_bias) inputs_.push_back(KernelPort(s.op.inputs[2], bias_dims, pd.bias_desc()));
  BindInputs();
  outputs_ = {KernelPort(y, dst_dims, pd.dst_desc())};
  std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, inputs_[0].memory},
                                          {DNNL_ARG_WEIGHTS, inputs_[1].memory},
                                          {DNNL_ARG_DST, outputs_[0].memory}};
  if (has_bias) args[DNNL_ARG_BIAS] = inputs_[2].memory;
  AddPrimitive(dnnl::convolution_forward(pd), std::move(args), pd.impl_info_str());
  return absl::OkStatus();
}

// matmul, and fused_gemm (act(a·b + c)) as the same primitive with its bias:
// oneDNN's matmul adds a bias of any shape that broadcasts to the product's
// before the activation post-op.
absl::Status Kernel::BuildMatMul(const CanonicalSignature& s) {
  const int rank = s.outputs[0].rank();
  const bool has_bias = s.op.kind == OpKind::kFusedGemm;
  inputs_.clear();
  for (const TensorType& t : s.op.inputs) inputs_.push_back(PlainPort(t, rank));
  BindInputs();
  outputs_ = {PlainPort(s.outputs[0], rank)};
  const memory::desc dst = outputs_[0].memory.get_desc();
  auto desc = has_bias ? dnnl::matmul::desc(inputs_[0].memory.get_desc(), inputs_[1].memory.get_desc(),
                                            inputs_[2].memory.get_desc(), dst)
                       : dnnl::matmul::desc(inputs_[0].memory.get_desc(), inputs_[1].memory.get_desc(), dst);
  dnnl::matmul::primitive_desc pd(desc, ActivationAttr(s.op.params.activation), engine_);
  std::unordered_map<int, dnnl::memory> args = {
      {DNNL_ARG_SRC, inputs_[0].memory}, {DNNL_ARG_WEIGHTS, inputs_[1].memory}, {DNNL_ARG_DST, outputs_[0].memory}};
  if (has_bias) args[DNNL_ARG_BIAS] = inputs_[2].memory;
  AddPrimitive(dnnl::matmul(pd), std::move(args), pd.impl_info_str());
  return absl::OkStatus();
}

absl::Status Kernel::BuildBinary(const CanonicalSignature& s) {
  const TensorType& out = s.outputs[0];
  const int rank = std::max(1, out.rank());
  const algorithm alg = s.op.kind == OpKind::kEwAdd ? algorithm::binary_add : algorithm::binary_mul;
  const memory::dims out_dims = PadDims(out.dims, rank);
  const bool broadcasts = PadDims(s.op.inputs[0].dims, rank) != out_dims || PadDims(s.op.inputs[1].dims, rank) != out_dims;
  if (auto layout = broadcasts ? std::nullopt : SharedSourceLayout(out_dims)) {
    inputs_ = {KernelPort(s.op.inputs[0], out_dims, *layout), KernelPort(s.op.inputs[1], out_dims, *layout)};
    outputs_ = {KernelPort(out, out_dims, *layout)};
  } else {
    inputs_ = {PlainPort(s.op.inputs[0], rank), PlainPort(s.op.inputs[1], rank)};
    outputs_ = {PlainPort(out, rank)};
  }
  BindInputs();
  // oneDNN broadcasts only the second source; both ops are commutative.
  int first = 0;
  if (PadDims(s.op.inputs[0].dims, rank) != out_dims) {
    if (PadDims(s.op.inputs[1].dims, rank) != out_dims) {
      return absl::UnimplementedError(absl::StrCat(
          OpKindName(s.op.kind), ": both operands broadcast (", s.op.inputs[0].ToString(), ", ",
          s.op.inputs[1].ToString(), "); oneDNN broadcasts only one"));
    }
    first = 1;
  }
  const Port& a = inputs_[first];
  const Port& b = inputs_[1 - first];
  dnnl::binary::desc desc(alg, a.memory.get_desc(), b.memory.get_desc(), outputs_[0].memory.get_desc());
  dnnl::binary::primitive_desc pd(desc, engine_);
  AddPrimitive(dnnl::binary(pd),
               {{DNNL_ARG_SRC_0, a.memory}, {DNNL_ARG_SRC_1, b.memory}, {DNNL_ARG_DST, outputs_[0].memory}},
               pd.impl_info_str());
  return absl::OkStatus();
}

absl::Status Kernel::BuildEltwise(const CanonicalSignature& s) {
  const Activation a = s.op.kind == OpKind::kRelu   ? Activation::kRelu
                       : s.op.kind == OpKind::kTanh ? Activation::kTanh
                                                    : Activation::kSigmoid;
  const int rank = std::max(1, s.outputs[0].rank());
  const memory::dims dims = PadDims(s.outputs[0].dims, rank);
  if (auto layout = SharedSourceLayout(dims)) {
    inputs_ = {KernelPort(s.op.inputs[0], dims, *layout)};
    outputs_ = {KernelPort(s.outputs[0], dims, *layout)};
  } else {
    inputs_ = {PlainPort(s.op.inputs[0], rank)};
    outputs_ = {PlainPort(s.outputs[0], rank)};
  }
  BindInputs();
  dnnl::eltwise_forward::desc desc(prop_kind::forward_inference, *EltwiseFor(a),
                                   inputs_[0].memory.get_desc(), 0.f, 0.f);
  dnnl::eltwise_forward::primitive_desc pd(desc, engine_);
  if (pd.dst_desc() != outputs_[0].memory.get_desc()) {
    // eltwise writes the source's layout; the output type always has it too.
    return absl::InternalError("eltwise output layout differs from the input's");
  }
  AddPrimitive(dnnl::eltwise_forward(pd), {{DNNL_ARG_SRC, inputs_[0].memory}, {DNNL_ARG_DST, outputs_[0].memory}},
               pd.impl_info_str());
  return absl::OkStatus();
}

absl::Status Kernel::BuildPool(const CanonicalSignature& s) {
  const OpParams& p = s.op.params;
  const TensorType& x = s.op.inputs[0];
  inputs_ = {PlainPort(x, 4)};
  BindInputs();
  outputs_ = {PlainPort(s.outputs[0], 4)};
  const Pads ph = WindowPads(p, 0, x.dims[2], p.kernel_h);
  const Pads pw = WindowPads(p, 1, x.dims[3], p.kernel_w);
  const algorithm alg = s.op.kind == OpKind::kPoolMax ? algorithm::pooling_max
                        : p.count_include_pad         ? algorithm::pooling_avg_include_padding
                                                      : algorithm::pooling_avg_exclude_padding;
  dnnl::pooling_forward::desc desc(prop_kind::forward_inference, alg, inputs_[0].memory.get_desc(),
                                   outputs_[0].memory.get_desc(), {p.stride_h, p.stride_w},
                                   {p.kernel_h, p.kernel_w}, {ph.before, pw.before}, {ph.after, pw.after});
  dnnl::pooling_forward::primitive_desc pd(desc, engine_);
  AddPrimitive(dnnl::pooling_forward(pd),
               {{DNNL_ARG_SRC, inputs_[0].memory}, {DNNL_ARG_DST, outputs_[0].memory}}, pd.impl_info_str());
  return absl::OkStatus();
}

absl::Status Kernel::BuildConcat(const CanonicalSignature& s) {
  const int rank = s.outputs[0].rank();
  std::vector<memory::desc> srcs;
  for (const TensorType& t : s.op.inputs) {
    inputs_.push_back(PlainPort(t, rank));
    srcs.push_back(inputs_.back().memory.get_desc());
  }
  BindInputs();
  outputs_ = {PlainPort(s.outputs[0], rank)};
  dnnl::concat::primitive_desc pd(outputs_[0].memory.get_desc(), s.op.params.axis, srcs, engine_);
  std::unordered_map<int, memory> args = {{DNNL_ARG_DST, outputs_[0].memory}};
  for (size_t i = 0; i < inputs_.size(); ++i) args[DNNL_ARG_MULTIPLE_SRC + i] = inputs_[i].memory;
  AddPrimitive(dnnl::concat(pd), args, pd.impl_info_str());
  return absl::OkStatus();
}

absl::Status Kernel::BuildSplit(const CanonicalSignature& s) {
  const TensorType& x = s.op.inputs[0];
  const int rank = x.rank();
  inputs_ = {PlainPort(x, rank)};
  BindInputs();
  memory::dims offsets(rank, 0);
  for (const TensorType& part : s.outputs) {
    outputs_.push_back(PlainPort(part, rank));
    const memory::desc sub = inputs_[0].memory.get_desc().submemory_desc(part.dims, offsets);
    AddReorder(memory(sub, engine_, inputs_[0].memory.get_data_handle()), outputs_.back().memory);
    offsets[s.op.params.axis] += part.dims[s.op.params.axis];
  }
  return absl::OkStatus();
}

absl::Status Kernel::BuildTranspose(const CanonicalSignature& s) {
  const TensorType& x = s.op.inputs[0];
  const TensorType& y = s.outputs[0];
  const int rank = std::max(1, x.rank());
  inputs_ = {PlainPort(x, rank)};
  BindInputs();
  // The input's buffer read in the output's index order.
  TensorType permuted = y;
  for (int i = 0; i < x.rank(); ++i) permuted.strides[i] = x.strides[s.op.params.perm[i]];
  const memory::dims dims = PadDims(y.dims, rank);
  memory view(StridedMd(permuted, rank), engine_, inputs_[0].memory.get_data_handle());
  if (!s.op.params.shuffle) {
    // No copy: the output is the input's buffer.
    outputs_ = {KernelPort(y, dims, view.get_desc(), inputs_[0].memory.get_data_handle())};
    return absl::OkStatus();
  }
  outputs_ = {PlainPort(y, rank)};
  AddReorder(view, outputs_[0].memory);
  return absl::OkStatus();
}

absl::Status Kernel::BuildReshape(const CanonicalSignature& s) {
  const TensorType& x = s.op.inputs[0];
  const TensorType& y = s.outputs[0];
  inputs_ = {PlainPort(x, std::max(1, x.rank()))};
  BindInputs();
  const int out_rank = std::max(1, y.rank());
  if (x.is_row_major()) {
    const memory::dims dims = PadDims(y.dims, out_rank);
    outputs_ = {KernelPort(y, dims, memory::desc(dims, dt::f32, RowMajor(dims)), inputs_[0].memory.get_data_handle())};
    return absl::OkStatus();
  }
  // A strided input is first copied to row-major order, into the output.
  outputs_ = {PlainPort(y, out_rank)};
  const memory::dims in_dims = PadDims(x.dims, std::max(1, x.rank()));
  memory row_major(memory::desc(in_dims, dt::f32, RowMajor(in_dims)), engine_,
                   outputs_[0].memory.get_data_handle());
  AddReorder(inputs_[0].memory, row_major);
  return absl::OkStatus();
}

absl::Status Kernel::BuildEnlarge(const CanonicalSignature& s) {
  const TensorType& w = s.op.inputs[0];
  const TensorType& y = s.outputs[0];
  inputs_ = {PlainPort(w, 4)};
  BindInputs();
  outputs_ = {PlainPort(y, 4)};
  const memory::dims offsets = {0, 0, (y.dims[2] - w.dims[2]) / 2, (y.dims[3] - w.dims[3]) / 2};
  const memory::desc sub = outputs_[0].memory.get_desc().submemory_desc(w.dims, offsets);
  AddZeroFill(outputs_[0].memory);
  AddReorder(inputs_[0].memory, memory(sub, engine_, outputs_[0].memory.get_data_handle()));
  return absl::OkStatus();
}

absl::Status Kernel::BuildMergeGConv(const CanonicalSignature& s) {
  const OpParams& p = s.op.params;
  const TensorType& w = s.op.inputs[0];
  inputs_ = {PlainPort(w, 4)};
  BindInputs();
  outputs_ = {PlainPort(s.outputs[0], 4)};
  AddZeroFill(outputs_[0].memory);
  // Group g's filters move to input-channel block g % count of the output.
  const int64_t per_group = w.dims[0] / p.groups, cg = w.dims[1];
  const memory::dims block = {per_group, cg, w.dims[2], w.dims[3]};
  for (int64_t g = 0; g < p.groups; ++g) {
    const memory::desc from = inputs_[0].memory.get_desc().submemory_desc(block, {g * per_group, 0, 0, 0});
    const memory::desc to =
        outputs_[0].memory.get_desc().submemory_desc(block, {g * per_group, (g % p.count) * cg, 0, 0});
    AddReorder(memory(from, engine_, inputs_[0].memory.get_data_handle()),
               memory(to, engine_, outputs_[0].memory.get_data_handle()));
  }
  return absl::OkStatus();
}

absl::Status Kernel::BuildBatchNorm(const CanonicalSignature& s) {
  const TensorType& x = s.op.inputs[0];
  if (x.rank() > 5) return absl::UnimplementedError("oneDNN batch normalization takes at most 5-D input");
  for (const TensorType& t : s.op.inputs) inputs_.push_back(PlainPort(t, t.rank()));
  BindInputs();
  outputs_ = {PlainPort(s.outputs[0], x.rank())};
  const auto flags = dnnl::normalization_flags::use_global_stats | dnnl::normalization_flags::use_scale |
                     dnnl::normalization_flags::use_shift;
  dnnl::batch_normalization_forward::desc desc(prop_kind::forward_inference, inputs_[0].memory.get_desc(),
                                               s.op.params.epsilon, flags);
  dnnl::batch_normalization_forward::primitive_desc pd(desc, engine_);
  AddPrimitive(dnnl::batch_normalization_forward(pd),
               {{DNNL_ARG_SRC, inputs_[0].memory},
                {DNNL_ARG_SCALE, inputs_[1].memory},
                {DNNL_ARG_SHIFT, inputs_[2].memory},
                {DNNL_ARG_MEAN, inputs_[3].memory},
                {DNNL_ARG_VARIANCE, inputs_[4].memory},
                {DNNL_ARG_DST, outputs_[0].memory}},
               pd.impl_info_str());
  return absl::OkStatus();
}

absl::Status Kernel::LoadInputs(const std::vector<FloatTensor>& inputs, dnnl::stream& stream) {
  if (inputs.size() != inputs_.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("kernel takes ", inputs_.size(), " inputs, got ", inputs.size()));
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    absl::Status s = LoadInput(static_cast<int>(i), inputs[i], stream);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status Kernel::LoadInput(int i, const FloatTensor& value, dnnl::stream& stream) {
  if (i < 0 || i >= static_cast<int>(inputs_.size())) {
    return absl::InvalidArgumentError(absl::StrCat("kernel has no input ", i));
  }
  if (value.type.dims != inputs_[i].type.dims ||
      static_cast<int64_t>(value.data.size()) != inputs_[i].type.num_elements()) {
    return absl::InvalidArgumentError(absl::StrCat("input ", i, " is ", value.type.ToString(),
                                                   ", the kernel takes ", inputs_[i].type.ToString()));
  }
  return CatchDnnl([&] {
    memory plain(inputs_[i].logical_md, engine_, const_cast<float*>(value.data.data()));
    dnnl::reorder(plain, inputs_[i].memory).execute(stream, plain, inputs_[i].memory);
    stream.wait();
    return absl::OkStatus();
  });
}

void Kernel::Run(dnnl::stream& stream) {
  for (const Step& step : steps_) step(stream);
  stream.wait();
}

absl::StatusOr<std::vector<FloatTensor>> Kernel::ReadOutputs(dnnl::stream& stream) {
  std::vector<FloatTensor> out(outputs_.size());
  absl::Status s = CatchDnnl([&] {
    for (size_t i = 0; i < outputs_.size(); ++i) {
      out[i].type = outputs_[i].type;
      out[i].data.resize(outputs_[i].type.num_elements());
      memory plain(outputs_[i].logical_md, engine_, out[i].data.data());
      dnnl::reorder(outputs_[i].memory, plain).execute(stream, outputs_[i].memory, plain);
    }
    stream.wait();
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return out;
}

}  // namespace taso::profiler::cpu
