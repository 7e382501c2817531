// The reference interpreter's machinery, generic over a value domain: every
// operator written once, evaluated over int32 and float32 by interpreter.cc
// and over symbolic reals by the verifier's axiom validation. A domain D
// provides: type T (default-constructible, copyable); static Add, Mul, Zero,
// One, Max, Lowest and Name; and members Supports(Activation),
// Activate(Activation, T), AvgFinish(sum, divisor, valid) and
// PoolConstant(kh, kw). Use interpreter.h unless you are adding a domain.
// A domain whose sums are unchanged by adding a product with zero (int32,
// wrapping) may say so with `static constexpr bool kZeroProductsAreExact`:
// its convolutions then run as a small matrix product over zero-padded
// patches, several times faster on the generator's small tensors.
#ifndef TASO_CORE_EVALUATOR_H_
#define TASO_CORE_EVALUATOR_H_

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "core/decomposition.h"
#include "core/graph.h"
#include "core/interpreter.h"
#include "core/op_registry.h"

namespace taso::internal {

// Row-major strides of `dims` aligned to the last dims of an output of rank
// `rank`, with 0 where the input is broadcast.
inline std::vector<int64_t> BroadcastStrides(const std::vector<int64_t>& dims, const std::vector<int64_t>& out) {
  std::vector<int64_t> strides(out.size(), 0);
  const std::vector<int64_t> own = RowMajorStrides(dims);
  const size_t offset = out.size() - dims.size();
  for (size_t i = 0; i < dims.size(); ++i) strides[offset + i] = dims[i] == 1 ? 0 : own[i];
  return strides;
}

// Calls fn(out_index, offset_a, offset_b) for every element of `out`.
template <typename Fn>
void ForEachBroadcast(const std::vector<int64_t>& out, const std::vector<int64_t>& sa,
                      const std::vector<int64_t>& sb, Fn fn) {
  const int rank = static_cast<int>(out.size());
  int64_t total = 1;
  for (int64_t d : out) total *= d;
  std::vector<int64_t> idx(rank, 0);
  int64_t oa = 0, ob = 0;
  for (int64_t i = 0; i < total; ++i) {
    fn(i, oa, ob);
    for (int d = rank - 1; d >= 0; --d) {
      if (++idx[d] < out[d]) {
        oa += sa[d];
        ob += sb[d];
        break;
      }
      oa -= sa[d] * (out[d] - 1);
      ob -= sb[d] * (out[d] - 1);
      idx[d] = 0;
    }
  }
}

template <typename D, typename = void>
struct ZeroProductsAreExact : std::false_type {};
template <typename D>
struct ZeroProductsAreExact<D, std::void_t<decltype(D::kZeroProductsAreExact)>>
    : std::bool_constant<D::kZeroProductsAreExact> {};

template <typename D>
class Evaluator {
 public:
  using T = typename D::T;
  using TensorT = Tensor<T>;

  explicit Evaluator(D domain) : d_(domain) {}

  absl::StatusOr<std::vector<TensorT>> Eval(OpKind kind, const OpParams& p,
                                            const std::vector<const TensorT*>& in) {
    std::vector<TensorType> in_types;
    for (const TensorT* t : in) {
      if (t == nullptr) return absl::InvalidArgumentError(absl::StrCat(OpKindName(kind), ": null input"));
      if (static_cast<int64_t>(t->data.size()) != t->type.num_elements()) {
        return absl::InvalidArgumentError(absl::StrCat(OpKindName(kind), ": input of type ", t->type.ToString(),
                                                       " holds ", t->data.size(), " values"));
      }
      in_types.push_back(t->type);
    }
    if (IsComposite(kind)) return EvalComposite(kind, p, in, in_types);
    auto types = InferOutputTypes(kind, p, in_types);
    if (!types.ok()) return types.status();
    std::vector<TensorT> out;
    for (TensorType& t : *types) {
      TensorT o;
      o.data.assign(t.num_elements(), D::Zero());
      o.type = std::move(t);
      out.push_back(std::move(o));
    }
    absl::Status s = Compute(kind, p, in, out);
    if (!s.ok()) return s;
    return out;
  }

 private:
  // A composite computes what its decomposition computes.
  absl::StatusOr<std::vector<TensorT>> EvalComposite(OpKind kind, const OpParams& p,
                                                     const std::vector<const TensorT*>& in,
                                                     const std::vector<TensorType>& in_types) {
    auto g = DecompositionOf(kind, p, in_types);
    if (!g.ok()) return g.status();
    std::vector<std::vector<TensorT>> values(g->num_nodes());
    for (const Node& node : g->nodes()) {  // in topological order
      if (node.kind == OpKind::kInput) continue;  // node i is operand i: read from `in`
      std::vector<const TensorT*> operands;
      for (const TensorRef& r : node.inputs) {
        operands.push_back(g->node(r.node).kind == OpKind::kInput ? in[r.node] : &values[r.node][r.index]);
      }
      auto out = Eval(node.kind, node.params, operands);
      if (!out.ok()) return out.status();
      values[node.id] = *std::move(out);
    }
    std::vector<TensorT> result;
    for (const GraphOutput& o : g->outputs()) {
      const TensorRef& r = o.tensor;
      result.push_back(g->node(r.node).kind == OpKind::kInput ? *in[r.node] : values[r.node][r.index]);
    }
    return result;
  }

  absl::Status Compute(OpKind kind, const OpParams& p, const std::vector<const TensorT*>& in,
                       std::vector<TensorT>& out) {
    switch (kind) {
      case OpKind::kEwAdd:
      case OpKind::kEwMul: {
        const TensorT& a = *in[0];
        const TensorT& b = *in[1];
        TensorT& o = out[0];
        const bool add = kind == OpKind::kEwAdd;
        if (a.type.dims == o.type.dims && b.type.dims == o.type.dims) {
          // No broadcast (most sums and products): one flat loop.
          const size_t n = o.data.size();
          if (add) {
            for (size_t i = 0; i < n; ++i) o.data[i] = D::Add(a.data[i], b.data[i]);
          } else {
            for (size_t i = 0; i < n; ++i) o.data[i] = D::Mul(a.data[i], b.data[i]);
          }
          return absl::OkStatus();
        }
        ForEachBroadcast(o.type.dims, BroadcastStrides(a.type.dims, o.type.dims),
                         BroadcastStrides(b.type.dims, o.type.dims), [&](int64_t i, int64_t ia, int64_t ib) {
                           o.data[i] = add ? D::Add(a.data[ia], b.data[ib]) : D::Mul(a.data[ia], b.data[ib]);
                         });
        return absl::OkStatus();
      }
      case OpKind::kScalarMul: {
        const T s = in[1]->data[0];
        for (size_t i = 0; i < out[0].data.size(); ++i) out[0].data[i] = D::Mul(in[0]->data[i], s);
        return absl::OkStatus();
      }
      case OpKind::kRelu:
      case OpKind::kTanh:
      case OpKind::kSigmoid: {
        const Activation a = kind == OpKind::kRelu   ? Activation::kRelu
                             : kind == OpKind::kTanh ? Activation::kTanh
                                                     : Activation::kSigmoid;
        if (absl::Status s = d_.Supports(a); !s.ok()) return s;
        for (size_t i = 0; i < out[0].data.size(); ++i) out[0].data[i] = d_.Activate(a, in[0]->data[i]);
        return absl::OkStatus();
      }
      case OpKind::kTranspose:
        Transpose(p, *in[0], out[0]);
        return absl::OkStatus();
      case OpKind::kMatMul:
        if (absl::Status s = d_.Supports(p.activation); !s.ok()) return s;
        MatMul(p, *in[0], *in[1], out[0]);
        return absl::OkStatus();
      case OpKind::kConv2D:
        if (absl::Status s = d_.Supports(p.activation); !s.ok()) return s;
        return Conv2D(p, *in[0], *in[1], in.size() > 2 ? in[2] : nullptr, out[0]);
      case OpKind::kPoolAvg:
      case OpKind::kPoolMax:
        return Pool(kind == OpKind::kPoolAvg, p, *in[0], out[0]);
      case OpKind::kEnlarge:
        Enlarge(*in[0], out[0]);
        return absl::OkStatus();
      case OpKind::kConcat:
        Concat(p.axis, in, out[0]);
        return absl::OkStatus();
      case OpKind::kSplit:
        Split(p.axis, *in[0], out);
        return absl::OkStatus();
      case OpKind::kReshape:
        out[0].data = in[0]->data;
        return absl::OkStatus();
      case OpKind::kMergeGConv:
        MergeGConv(p, *in[0], out[0]);
        return absl::OkStatus();
      case OpKind::kConstPool:
        std::fill(out[0].data.begin(), out[0].data.end(), D::PoolConstant(p.shape[2], p.shape[3]));
        return absl::OkStatus();
      case OpKind::kConstIConv: {
        const auto& s = p.shape;
        const bool depthwise = s[1] == 1;
        for (int64_t co = 0; co < s[0]; ++co) {
          for (int64_t ci = 0; ci < s[1]; ++ci) {
            if (depthwise || co == ci) {
              out[0].data[((co * s[1] + ci) * s[2] + s[2] / 2) * s[3] + s[3] / 2] = D::One();
            }
          }
        }
        return absl::OkStatus();
      }
      case OpKind::kConstIMatMul:
        for (int64_t i = 0; i < p.shape[0]; ++i) out[0].data[i * p.shape[0] + i] = D::One();
        return absl::OkStatus();
      case OpKind::kConstOnes:
        std::fill(out[0].data.begin(), out[0].data.end(), D::One());
        return absl::OkStatus();
      case OpKind::kBatchNorm:
        return BatchNorm(p, in, out[0]);
      case OpKind::kInput:
      case OpKind::kWeight:
        return absl::InvalidArgumentError("graph inputs and weights are fed, not evaluated");
      case OpKind::kFusedGemm:
        return absl::InternalError("a composite operator is evaluated through its decomposition");
      case OpKind::kOpaque:
        return absl::UnimplementedError(absl::StrCat("opaque operator ", p.opaque.domain,
                                                     p.opaque.domain.empty() ? "" : "::", p.opaque.op_type,
                                                     " has no reference semantics"));
    }
    return absl::InvalidArgumentError("unknown operator kind");
  }

  static void Transpose(const OpParams& p, const TensorT& x, TensorT& o) {
    const int rank = x.type.rank();
    const std::vector<int64_t> in_strides = RowMajorStrides(x.type.dims);
    std::vector<int64_t> gather(rank);  // input stride for each output dim
    for (int i = 0; i < rank; ++i) gather[i] = in_strides[p.perm[i]];
    ForEachBroadcast(o.type.dims, gather, gather,
                     [&](int64_t i, int64_t src, int64_t) { o.data[i] = x.data[src]; });
  }

  void MatMul(const OpParams& p, const TensorT& x, const TensorT& y, TensorT& o) const {
    const int r = o.type.rank();
    const int64_t m = o.type.dims[r - 2], n = o.type.dims[r - 1], k = x.type.dims[x.type.rank() - 1];
    std::vector<int64_t> batch(o.type.dims.begin(), o.type.dims.end() - 2);
    std::vector<int64_t> xb(x.type.dims.begin(), x.type.dims.end() - 2);
    std::vector<int64_t> yb(y.type.dims.begin(), y.type.dims.end() - 2);
    std::vector<int64_t> sx = BroadcastStrides(xb, batch), sy = BroadcastStrides(yb, batch);
    ForEachBroadcast(batch, sx, sy, [&](int64_t b, int64_t bx, int64_t by) {
      const T* xp = x.data.data() + bx * m * k;
      const T* yp = y.data.data() + by * k * n;
      T* op = o.data.data() + b * m * n;
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          T acc = D::Zero();
          for (int64_t l = 0; l < k; ++l) acc = D::Add(acc, D::Mul(xp[i * k + l], yp[l * n + j]));
          op[i * n + j] = d_.Activate(p.activation, acc);
        }
      }
    });
  }

  // act(conv(x, w) + bias[oc]): the bias joins each sum last, before the activation.
  absl::Status Conv2D(const OpParams& p, const TensorT& x, const TensorT& w, const TensorT* bias,
                      TensorT& o) const {
    const auto& xd = x.type.dims;
    const auto& wd = w.type.dims;
    const int64_t batch = xd[0], c = xd[1], h = xd[2], wi = xd[3];
    const int64_t cout = wd[0], cg = wd[1], kh = wd[2], kw = wd[3];
    const int64_t groups = c / cg, cout_per_group = cout / groups;
    auto gh = ComputeWindow(p, 0, h, kh);
    auto gw = ComputeWindow(p, 1, wi, kw);
    if (!gh.ok()) return gh.status();
    if (!gw.ok()) return gw.status();
    const int64_t ho = gh->out, wo = gw->out;
    const int64_t sh = p.stride_h, sw = p.stride_w;
    // Accumulates whole output planes, one weight tap at a time, so the inner
    // loop is a contiguous multiply-add the compiler vectorizes. Each output
    // still sums its terms in (ic, ky, kx) order, as the naive loop did.
    std::vector<T> acc(ho * wo);
    // Per weight tap, the output rows and columns whose input pixel is
    // inside: computed once here, not per tap of every channel (the
    // divisions were most of a small convolution's time).
    std::vector<int64_t> oy_lo(kh), oy_hi(kh), ox_lo(kw), ox_hi(kw);
    for (int64_t ky = 0; ky < kh; ++ky) WindowRange(ky - gh->pad_before, h, sh, ho, oy_lo[ky], oy_hi[ky]);
    for (int64_t kx = 0; kx < kw; ++kx) WindowRange(kx - gw->pad_before, wi, sw, wo, ox_lo[kx], ox_hi[kx]);
    if constexpr (ZeroProductsAreExact<D>::value) {
      // Per image and group, the input under every weight tap at every output
      // pixel (zero outside the image), then each output channel as one row
      // of weights times it: the same terms in the same (ic, ky, kx) order,
      // plus products with the zeros, which change no sum here.
      const int64_t taps = cg * kh * kw, pixels = ho * wo;
      std::vector<T> patches(taps * pixels);
      for (int64_t b = 0; b < batch; ++b) {
        for (int64_t g = 0; g < groups; ++g) {
          std::fill(patches.begin(), patches.end(), D::Zero());
          for (int64_t ic = 0; ic < cg; ++ic) {
            const T* plane = &x.data[(b * c + g * cg + ic) * h * wi];
            for (int64_t ky = 0; ky < kh; ++ky) {
              for (int64_t kx = 0; kx < kw; ++kx) {
                T* patch = &patches[((ic * kh + ky) * kw + kx) * pixels];
                const int64_t shift = kx - gw->pad_before;
                for (int64_t oy = oy_lo[ky]; oy <= oy_hi[ky]; ++oy) {
                  const T* row = plane + (oy * sh - gh->pad_before + ky) * wi + shift;
                  for (int64_t ox = ox_lo[kx]; ox <= ox_hi[kx]; ++ox) patch[oy * wo + ox] = row[ox * sw];
                }
              }
            }
          }
          for (int64_t oc = g * cout_per_group; oc < (g + 1) * cout_per_group; ++oc) {
            std::fill(acc.begin(), acc.end(), D::Zero());
            const T* weights = &w.data[oc * taps];
            T* __restrict sums = acc.data();  // no alias of the patches: the loop vectorizes
            for (int64_t k = 0; k < taps; ++k) {
              const T tap = weights[k];
              const T* __restrict patch = &patches[k * pixels];
              for (int64_t i = 0; i < pixels; ++i) sums[i] = D::Add(sums[i], D::Mul(patch[i], tap));
            }
            T* dst = &o.data[(b * cout + oc) * pixels];
            if (bias != nullptr) {
              for (int64_t i = 0; i < pixels; ++i) sums[i] = D::Add(sums[i], bias->data[oc]);
            }
            for (int64_t i = 0; i < pixels; ++i) dst[i] = d_.Activate(p.activation, sums[i]);
          }
        }
      }
      return absl::OkStatus();
    }
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t oc = 0; oc < cout; ++oc) {
        const int64_t g = oc / cout_per_group;
        std::fill(acc.begin(), acc.end(), D::Zero());
        for (int64_t ic = 0; ic < cg; ++ic) {
          const T* plane = &x.data[(b * c + g * cg + ic) * h * wi];
          for (int64_t ky = 0; ky < kh; ++ky) {
            for (int64_t kx = 0; kx < kw; ++kx) {
              const T tap = w.data[((oc * cg + ic) * kh + ky) * kw + kx];
              const int64_t shift = kx - gw->pad_before;
              const int64_t lo = ox_lo[kx], hi = ox_hi[kx];
              for (int64_t oy = oy_lo[ky]; oy <= oy_hi[ky]; ++oy) {
                const int64_t iy = oy * sh - gh->pad_before + ky;
                const T* row = plane + iy * wi + shift;
                T* out = &acc[oy * wo];
                if (sw == 1) {
                  for (int64_t ox = lo; ox <= hi; ++ox) out[ox] = D::Add(out[ox], D::Mul(row[ox], tap));
                } else {
                  for (int64_t ox = lo; ox <= hi; ++ox) out[ox] = D::Add(out[ox], D::Mul(row[ox * sw], tap));
                }
              }
            }
          }
        }
        T* dst = &o.data[(b * cout + oc) * ho * wo];
        if (bias != nullptr) {
          for (int64_t i = 0; i < ho * wo; ++i) acc[i] = D::Add(acc[i], bias->data[oc]);
        }
        for (int64_t i = 0; i < ho * wo; ++i) dst[i] = d_.Activate(p.activation, acc[i]);
      }
    }
    return absl::OkStatus();
  }

  // The outputs o in [lo, hi] (of `outputs`) whose input o * stride + shift
  // lies in [0, extent); hi < lo when none does.
  static void WindowRange(int64_t shift, int64_t extent, int64_t stride, int64_t outputs, int64_t& lo,
                          int64_t& hi) {
    lo = shift >= 0 ? 0 : (-shift + stride - 1) / stride;
    hi = extent - 1 - shift < 0 ? -1 : std::min(outputs - 1, (extent - 1 - shift) / stride);
  }

  absl::Status Pool(bool average, const OpParams& p, const TensorT& x, TensorT& o) const {
    const auto& xd = x.type.dims;
    const int64_t planes = xd[0] * xd[1], h = xd[2], w = xd[3];
    auto gh = ComputeWindow(p, 0, h, p.kernel_h);
    auto gw = ComputeWindow(p, 1, w, p.kernel_w);
    if (!gh.ok()) return gh.status();
    if (!gw.ok()) return gw.status();
    const int64_t ho = gh->out, wo = gw->out;
    for (int64_t pl = 0; pl < planes; ++pl) {
      for (int64_t oy = 0; oy < ho; ++oy) {
        for (int64_t ox = 0; ox < wo; ++ox) {
          T acc = average ? D::Zero() : D::Lowest();
          int64_t valid = 0;
          for (int64_t ky = 0; ky < p.kernel_h; ++ky) {
            const int64_t iy = oy * p.stride_h - gh->pad_before + ky;
            if (iy < 0 || iy >= h) continue;
            for (int64_t kx = 0; kx < p.kernel_w; ++kx) {
              const int64_t ix = ox * p.stride_w - gw->pad_before + kx;
              if (ix < 0 || ix >= w) continue;
              const T v = x.data[(pl * h + iy) * w + ix];
              acc = average ? D::Add(acc, v) : D::Max(acc, v);
              ++valid;
            }
          }
          if (average) {
            const int64_t divisor = p.count_include_pad ? p.kernel_h * p.kernel_w : std::max<int64_t>(valid, 1);
            acc = D::AvgFinish(acc, divisor, valid);
          }
          o.data[(pl * ho + oy) * wo + ox] = acc;
        }
      }
    }
    return absl::OkStatus();
  }

  static void Enlarge(const TensorT& w, TensorT& o) {
    const auto& wd = w.type.dims;
    const int64_t kh = o.type.dims[2], kw = o.type.dims[3];
    const int64_t dy = (kh - wd[2]) / 2, dx = (kw - wd[3]) / 2;
    for (int64_t plane = 0; plane < wd[0] * wd[1]; ++plane) {
      for (int64_t y = 0; y < wd[2]; ++y) {
        for (int64_t x = 0; x < wd[3]; ++x) {
          o.data[(plane * kh + y + dy) * kw + x + dx] = w.data[(plane * wd[2] + y) * wd[3] + x];
        }
      }
    }
  }

  // Splits dims around `axis` into (outer, axis extent, inner).
  static void AxisBlocks(const std::vector<int64_t>& dims, int axis, int64_t& outer, int64_t& inner) {
    outer = 1;
    inner = 1;
    for (int i = 0; i < axis; ++i) outer *= dims[i];
    for (size_t i = axis + 1; i < dims.size(); ++i) inner *= dims[i];
  }

  static void Concat(int axis, const std::vector<const TensorT*>& in, TensorT& o) {
    int64_t outer, inner;
    AxisBlocks(o.type.dims, axis, outer, inner);
    T* dst = o.data.data();
    for (int64_t b = 0; b < outer; ++b) {
      for (const TensorT* t : in) {
        const int64_t block = t->type.dims[axis] * inner;
        std::copy_n(t->data.data() + b * block, block, dst);
        dst += block;
      }
    }
  }

  static void Split(int axis, const TensorT& x, std::vector<TensorT>& out) {
    int64_t outer, inner;
    AxisBlocks(x.type.dims, axis, outer, inner);
    const T* src = x.data.data();
    for (int64_t b = 0; b < outer; ++b) {
      for (TensorT& o : out) {
        const int64_t block = o.type.dims[axis] * inner;
        std::copy_n(src, block, o.data.data() + b * block);
        src += block;
      }
    }
  }

  // new_w[o, j] = w[o, j % cg] when j's block is o's group modulo `count`, else 0.
  static void MergeGConv(const OpParams& p, const TensorT& w, TensorT& o) {
    const auto& wd = w.type.dims;
    const int64_t cout = wd[0], cg = wd[1], k = wd[2] * wd[3];
    const int64_t cout_per_group = cout / p.groups;
    for (int64_t oc = 0; oc < cout; ++oc) {
      const int64_t block = (oc / cout_per_group) % p.count;
      for (int64_t ic = 0; ic < cg; ++ic) {
        std::copy_n(w.data.data() + (oc * cg + ic) * k, k,
                    o.data.data() + (oc * cg * p.count + block * cg + ic) * k);
      }
    }
  }

  absl::Status BatchNorm(const OpParams& p, const std::vector<const TensorT*>& in, TensorT& o) const {
    if constexpr (!std::is_floating_point_v<T>) {
      return absl::UnimplementedError(absl::StrCat("batchnorm has no ", D::Name(), " semantics; use the float interpreter"));
    } else {
      const TensorT& x = *in[0];
      const int64_t n = x.type.dims[0], c = x.type.dims[1];
      const int64_t inner = x.type.num_elements() / std::max<int64_t>(n * c, 1);
      for (int64_t b = 0; b < n; ++b) {
        for (int64_t ch = 0; ch < c; ++ch) {
          const T scale = in[1]->data[ch] / std::sqrt(in[4]->data[ch] + p.epsilon);
          const T shift = in[2]->data[ch] - in[3]->data[ch] * scale;
          for (int64_t i = 0; i < inner; ++i) {
            const int64_t at = (b * c + ch) * inner + i;
            o.data[at] = x.data[at] * scale + shift;
          }
        }
      }
      return absl::OkStatus();
    }
  }

  D d_;
};

template <typename D>
absl::StatusOr<std::vector<Tensor<typename D::T>>> EvaluateGraph(
    const Graph& graph, const std::map<std::string, Tensor<typename D::T>>& feeds, D domain) {
  using T = typename D::T;
  auto order = graph.TopologicalOrder();
  if (!order.ok()) return order.status();
  std::vector<std::vector<Tensor<T>>> values(graph.num_nodes());
  Evaluator<D> eval(domain);
  for (int id : *order) {
    const Node& node = graph.node(id);
    if (node.kind == OpKind::kInput || node.kind == OpKind::kWeight) {
      const TensorType& type = node.output_types[0];
      Tensor<T> value;
      value.type = type;
      auto it = feeds.find(node.name);
      if (it != feeds.end()) {
        if (it->second.type.dims != type.dims ||
            static_cast<int64_t>(it->second.data.size()) != type.num_elements()) {
          return absl::InvalidArgumentError(absl::StrCat("feed for ", DescribeNode(node), " has shape ",
                                                         DimsToString(it->second.type.dims), ", expected ",
                                                         type.ToString()));
        }
        value.data = it->second.data;
      } else if (std::is_same_v<T, float> && node.data && type.dtype == DType::kFloat32) {
        value.data.resize(type.num_elements());
        std::memcpy(value.data.data(), node.data->data(), node.data->size());
      } else {
        return absl::InvalidArgumentError(absl::StrCat("no value fed for ", DescribeNode(node)));
      }
      values[id].push_back(std::move(value));
      continue;
    }
    std::vector<const Tensor<T>*> in;
    for (const TensorRef& r : node.inputs) in.push_back(&values[r.node][r.index]);
    auto out = eval.Eval(node.kind, node.params, in);
    if (!out.ok()) {
      return absl::Status(out.status().code(), absl::StrCat(DescribeNode(node), " (", D::Name(), "): ",
                                                            out.status().message()));
    }
    values[id] = *std::move(out);
  }
  std::vector<Tensor<T>> result;
  for (const GraphOutput& o : graph.outputs()) result.push_back(values[o.tensor.node][o.tensor.index]);
  return result;
}

}  // namespace taso::internal

#endif  // TASO_CORE_EVALUATOR_H_
