#include "models/resnet50.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace taso::models {
namespace {

// Appends operators to a graph, remembering the first error so the network
// reads as straight-line code; after an error every call is a no-op.
class NetworkBuilder {
 public:
  explicit NetworkBuilder(Graph& graph) : graph_(graph) {}

  const absl::Status& status() const { return status_; }

  // A convolution with a square kernel and an [out,in,k,k] weight named
  // `weight_name`; SAME padding keeps the extent at ceil(in / stride).
  TensorRef Conv(TensorRef x, int64_t out_channels, int kernel, int stride, Activation activation,
                 const std::string& weight_name) {
    if (!status_.ok()) return {};
    const int64_t in_channels = graph_.type(x).dims[1];
    const TensorRef w = graph_.AddWeight(
        weight_name, TensorType::RowMajor(DType::kFloat32, {out_channels, in_channels, kernel, kernel}));
    OpParams p;
    p.stride_h = p.stride_w = stride;
    p.padding = Padding::kSame;
    p.activation = activation;
    return Op(OpKind::kConv2D, p, {x, w});
  }

  TensorRef Pool(OpKind kind, TensorRef x, int kernel, int stride, Padding padding) {
    OpParams p;
    p.kernel_h = p.kernel_w = kernel;
    p.stride_h = p.stride_w = stride;
    p.padding = padding;
    return Op(kind, p, {x});
  }

  TensorRef Op(OpKind kind, const OpParams& params, const std::vector<TensorRef>& inputs) {
    if (!status_.ok()) return {};
    auto out = graph_.AddOp1(kind, params, inputs);
    if (!out.ok()) {
      status_ = out.status();
      return {};
    }
    return *out;
  }

  TensorRef Weight(const std::string& name, std::vector<int64_t> dims) {
    if (!status_.ok()) return {};
    return graph_.AddWeight(name, TensorType::RowMajor(DType::kFloat32, std::move(dims)));
  }

  const TensorType& type(TensorRef t) const { return graph_.type(t); }

 private:
  Graph& graph_;
  absl::Status status_;
};

// 1x1 reduce, 3x3 (carrying the stage's stride: v1.5), 1x1 expand to
// 4 * width channels, plus the shortcut, then relu. Batch norm is folded
// into the convolutions; relu is fused where nothing else intervenes.
TensorRef Bottleneck(NetworkBuilder& net, TensorRef x, int64_t width, int stride, bool project,
                     const std::string& prefix) {
  TensorRef t = net.Conv(x, width, 1, 1, Activation::kRelu, prefix + ".conv1.weight");
  t = net.Conv(t, width, 3, stride, Activation::kRelu, prefix + ".conv2.weight");
  t = net.Conv(t, 4 * width, 1, 1, Activation::kNone, prefix + ".conv3.weight");
  const TensorRef shortcut =
      project ? net.Conv(x, 4 * width, 1, stride, Activation::kNone, prefix + ".downsample.weight")
              : x;
  const TensorRef sum = net.Op(OpKind::kEwAdd, OpParams{}, {t, shortcut});
  return net.Op(OpKind::kRelu, OpParams{}, {sum});
}

}  // namespace

absl::StatusOr<Graph> BuildResNet50(int batch, int image) {
  if (batch < 1 || image < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("ResNet-50 needs batch >= 1 and image >= 1, got batch ", batch, ", image ", image));
  }
  constexpr int kBlocksPerStage[] = {3, 4, 6, 3};
  constexpr int64_t kClasses = 1000;

  Graph graph;
  NetworkBuilder net(graph);
  TensorRef x = graph.AddInput("data", TensorType::RowMajor(DType::kFloat32, {batch, 3, image, image}));
  x = net.Conv(x, 64, 7, 2, Activation::kRelu, "conv1.weight");
  x = net.Pool(OpKind::kPoolMax, x, 3, 2, Padding::kSame);

  int64_t width = 64;
  for (int stage = 0; stage < 4; ++stage, width *= 2) {
    for (int block = 0; block < kBlocksPerStage[stage]; ++block) {
      const bool first = block == 0;
      // Stage 1 keeps the pooled resolution; the others halve it.
      const int stride = first && stage > 0 ? 2 : 1;
      x = Bottleneck(net, x, width, stride, /*project=*/first,
                     absl::StrCat("layer", stage + 1, ".", block));
    }
  }
  if (!net.status().ok()) return net.status();

  // Global average pool: a VALID window over the whole map (7x7 at 224).
  const TensorType& features = net.type(x);
  const int64_t channels = features.dims[1];
  OpParams pool;
  pool.kernel_h = static_cast<int>(features.dims[2]);
  pool.kernel_w = static_cast<int>(features.dims[3]);
  pool.padding = Padding::kValid;
  x = net.Op(OpKind::kPoolAvg, pool, {x});

  OpParams flatten;
  flatten.shape = {batch, channels};
  x = net.Op(OpKind::kReshape, flatten, {x});
  x = net.Op(OpKind::kMatMul, OpParams{}, {x, net.Weight("fc.weight", {channels, kClasses})});
  x = net.Op(OpKind::kEwAdd, OpParams{}, {x, net.Weight("fc.bias", {kClasses})});
  if (!net.status().ok()) return net.status();
  graph.AddOutput("logits", x);
  return graph;
}

}  // namespace taso::models
