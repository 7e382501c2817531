// ResNet-50 (v1.5) inference as a graph in our IR, the way TASO builds it:
// batch norm folded into the convolutions, relu fused into every conv that
// is not followed by a residual add. Weights carry types but no data, so
// the graph serves cost estimates and optimisation, not inference.
#ifndef TASO_MODELS_RESNET50_H_
#define TASO_MODELS_RESNET50_H_

#include "absl/status/statusor.h"
#include "core/graph.h"

namespace taso::models {

// Input "data" f32[batch,3,image,image]; one output "logits" f32[batch,1000].
// 53 conv2d nodes: the 7x7/2 stem, 16 bottleneck blocks of three convs
// (stages of 3, 4, 6 and 3 blocks; the 3x3 of the first block of stages 2-4
// has stride 2), and a 1x1 projection shortcut on each stage's first block.
// The final average pool covers the whole feature map (7x7 at image 224),
// so smaller images build too. InvalidArgument when batch or image < 1.
absl::StatusOr<taso::Graph> BuildResNet50(int batch = 1, int image = 224);

}  // namespace taso::models

#endif  // TASO_MODELS_RESNET50_H_
