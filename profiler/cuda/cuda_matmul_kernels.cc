#include "profiler/cuda/cuda_plans.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/op.h"
#include "profiler/cuda/cuda_kernel_support.h"

namespace taso::profiler::cuda {

namespace {

// One matmul operand as cuBLAS sees it in the row-major-as-column-major
// formulation below: a row-major matrix needs no transpose, a column-major
// one (TASO's transposed layout) is read transposed, never copied.
struct GemmOperand {
  cublasOperation_t op = CUBLAS_OP_N;
  int64_t ld = 1;
  int64_t batch_stride = 0;  // 0: one matrix for every batch entry
};

absl::StatusOr<GemmOperand> DescribeGemmOperand(const CanonicalSignature& s, const TensorType& t,
                                                const std::vector<int64_t>& out_batch) {
  const int r = t.rank();
  const int64_t rows = t.dims[r - 2], cols = t.dims[r - 1];
  const int64_t row_stride = t.strides[r - 2], col_stride = t.strides[r - 1];
  GemmOperand g;
  if ((cols == 1 || col_stride == 1) && (rows == 1 || row_stride >= cols)) {
    g.op = CUBLAS_OP_N;
    g.ld = rows == 1 ? cols : row_stride;
  } else if ((rows == 1 || row_stride == 1) && (cols == 1 || col_stride >= rows)) {
    g.op = CUBLAS_OP_T;
    g.ld = cols == 1 ? rows : col_stride;
  } else {
    return Unsupported(s, absl::StrCat("operand ", t.ToString(),
                                       " is neither row- nor column-major in its last two dimensions"));
  }
  g.ld = std::max<int64_t>(g.ld, 1);
  const std::vector<int64_t> batch(t.dims.begin(), t.dims.end() - 2);
  if (Product(batch) == 1) return g;  // broadcast over every batch entry
  const size_t offset = out_batch.size() - batch.size();
  for (size_t i = 0; i < batch.size(); ++i) {
    if (batch[i] != out_batch[offset + i]) {
      return Unsupported(s, "cublasSgemmStridedBatched cannot broadcast part of an operand's batch dimensions");
    }
  }
  // The batch entries must sit one stride apart.
  const Loop l = Simplify({batch, {std::vector<int64_t>(t.strides.begin(), t.strides.end() - 2)}}, false);
  if (l.dims.size() != 1) return Unsupported(s, absl::StrCat("the batch entries of ", t.ToString(), " are not evenly strided"));
  g.batch_stride = l.strides[0][0];
  return g;
}

}  // namespace

// matmul: C = X Y with cublasSgemmStridedBatched. cuBLAS is column-major, so
// it computes C^T = Y^T X^T: a row-major C (m x n) is a column-major C^T.
// The activation follows in place, inside the timed repetition.
absl::StatusOr<Plan> MatMul(const CanonicalSignature& s, const std::vector<float*>& in, const DeviceContext& ctx,
                            Arena& arena) {
  const TensorType& x = s.op.inputs[0];
  const TensorType& y = s.op.inputs[1];
  const TensorType& c = s.outputs[0];
  const int r = c.rank();
  const std::vector<int64_t> out_batch(c.dims.begin(), c.dims.end() - 2);
  const int64_t m = c.dims[r - 2], n = c.dims[r - 1], k = x.dims[x.rank() - 1];
  const int64_t batch = Product(out_batch);
  TASO_CUDA_ASSIGN_OR_RETURN(GemmOperand gx, DescribeGemmOperand(s, x, out_batch));
  TASO_CUDA_ASSIGN_OR_RETURN(GemmOperand gy, DescribeGemmOperand(s, y, out_batch));
  for (int64_t v : {m, n, k, batch, gx.ld, gy.ld}) {
    if (!FitsInt(v)) return Unsupported(s, "a matrix extent exceeds cuBLAS's 32-bit sizes");
  }
  TASO_CUDA_ASSIGN_OR_RETURN(float* out, arena.Floats(LayoutExtent(c)));
  const cublasHandle_t cublas = ctx.cublas;
  const float* x_data = in[0];
  const float* y_data = in[1];
  Plan plan;
  plan.steps.push_back([=] {
    return CublasCall(cublasSgemmStridedBatched(cublas, gy.op, gx.op, static_cast<int>(n), static_cast<int>(m),
                                                static_cast<int>(k), &kOne, y_data, static_cast<int>(gy.ld),
                                                gy.batch_stride, x_data, static_cast<int>(gx.ld), gx.batch_stride,
                                                &kZero, out, static_cast<int>(n), m * n, static_cast<int>(batch)),
                      "cublasSgemmStridedBatched");
  });
  auto letter = [](cublasOperation_t op) { return op == CUBLAS_OP_N ? "N" : "T"; };
  plan.kernel = absl::StrCat("cublasSgemmStridedBatched ", letter(gy.op), letter(gx.op));
  TASO_CUDA_RETURN_IF_ERROR(AppendActivation(ctx, arena, s.op.params.activation, out, c.num_elements(), plan));
  plan.outputs = {out};
  return plan;
}

}  // namespace taso::profiler::cuda
