#include "verifier/axioms.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/hash.h"

namespace taso::verifier {
namespace {

// Builds one axiom's terms; every tensor or integer it creates is a bound
// variable of the axiom's quantifier.
class Builder {
 public:
  explicit Builder(Symbols& s) : s_(s), bound_(s.ctx()) {}

  z3::expr T(const char* name) { return Bind(s_.ctx().constant(name, s_.tensor())); }
  z3::expr I(const char* name) { return Bind(s_.ctx().int_const(name)); }
  z3::expr N(int64_t v) { return s_.ctx().int_val(v); }

  z3::expr add(const z3::expr& x, const z3::expr& y) { return s_.Apply("ewadd", {}, {x, y}); }
  z3::expr mul(const z3::expr& x, const z3::expr& y) { return s_.Apply("ewmul", {}, {x, y}); }
  // Sums and products of operands of different shapes, one or both broadcast.
  z3::expr add_bcast(const z3::expr& x, const z3::expr& y) { return s_.Apply("ewadd_bcast", {}, {x, y}); }
  z3::expr mul_bcast(const z3::expr& x, const z3::expr& y) { return s_.Apply("ewmul_bcast", {}, {x, y}); }
  z3::expr smul(const z3::expr& x, const z3::expr& w) { return s_.Apply("smul", {}, {x, w}); }
  z3::expr relu(const z3::expr& x) { return s_.Apply("relu", {}, {x}); }
  z3::expr tr(const z3::expr& p, const z3::expr& x) { return s_.Apply("transpose", {p}, {x}); }
  z3::expr tr2(const z3::expr& x) { return tr(N(20002), x); }  // 2-D (1,0)
  z3::expr mm(const z3::expr& act, const z3::expr& x, const z3::expr& y) { return s_.Apply("matmul", {act}, {x, y}); }
  z3::expr mm(const z3::expr& x, const z3::expr& y) { return mm(N(kActNone), x, y); }
  // A concat carries whether its halves have equal shapes. In every law but
  // two, all its concats have equal halves together or none does (the shapes
  // that decide it are the same), so one bound flag serves them all; a flag
  // free on one side only would state the law for concats that cannot exist.
  z3::expr cat(const z3::expr& axis, const z3::expr& x, const z3::expr& y) { return cat(axis, even(), x, y); }
  z3::expr cat(int axis, const z3::expr& x, const z3::expr& y) { return cat(N(axis), x, y); }
  z3::expr cat(const z3::expr& axis, const z3::expr& even, const z3::expr& x, const z3::expr& y) {
    return s_.Apply("concat", {axis, even}, {x, y});
  }
  z3::expr even() {
    if (!even_) even_ = I("even");
    return *even_;
  }
  z3::expr split(int out, const z3::expr& axis, const z3::expr& x) {
    return s_.Apply(absl::StrCat("split_", out), {axis}, {x});
  }
  // conv2d(stride_h, stride_w, pad, act, groups; x, w)
  struct Conv {
    z3::expr sh, sw, pad, act, groups;
  };
  z3::expr conv(const Conv& c, const z3::expr& x, const z3::expr& w) {
    return s_.Apply("conv2d", {c.sh, c.sw, c.pad, c.act, c.groups}, {x, w});
  }
  // pool(kh, kw, sh, sw, pad[, include_pad]; x)
  struct Pool {
    z3::expr kh, kw, sh, sw, pad;
  };
  z3::expr avg(const Pool& p, const z3::expr& x, const z3::expr& include_pad) {
    return s_.Apply("pool_avg", {p.kh, p.kw, p.sh, p.sw, p.pad, include_pad}, {x});
  }
  z3::expr max(const Pool& p, const z3::expr& x) { return s_.Apply("pool_max", {p.kh, p.kw, p.sh, p.sw, p.pad}, {x}); }
  z3::expr const_pool(const z3::expr& c, const z3::expr& kh, const z3::expr& kw) {
    return s_.Apply("const_pool", {c, N(1), kh, kw}, {});
  }
  z3::expr const_iconv(const z3::expr& c0, const z3::expr& c1, const z3::expr& kh, const z3::expr& kw) {
    return s_.Apply("const_iconv", {c0, c1, kh, kw}, {});
  }
  z3::expr const_imatmul(const z3::expr& n) { return s_.Apply("const_imatmul", {n}, {}); }
  z3::expr enlarge(const z3::expr& kh, const z3::expr& kw, const z3::expr& w) {
    return s_.Apply("enlarge", {kh, kw}, {w});
  }
  z3::expr Apply(const std::string& name, const std::vector<z3::expr>& params, const std::vector<z3::expr>& args) {
    return s_.Apply(name, params, args);
  }

  z3::expr ones4() { return Apply("const_ones_r4", {I("d0"), I("d1"), I("d2"), I("d3")}, {}); }  // any 4-D ones
  // A dense stride-1 SAME convolution without activation.
  Conv UnitConv() { return Conv{N(1), N(1), N(kPadSame), N(kActNone), N(1)}; }
  // Any window at stride 1 with SAME padding: the output keeps the input's shape.
  Pool UnitPool() { return Pool{I("kh"), I("kw"), N(1), N(1), N(kPadSame)}; }
  Conv AnyConv(bool with_activation) {
    return Conv{I("sh"), I("sw"), I("pad"), with_activation ? I("act") : N(kActNone), I("groups")};
  }
  Pool AnyPool() { return Pool{I("kh"), I("kw"), I("sh"), I("sw"), I("pad")}; }

  const z3::expr_vector& bound() const { return bound_; }

 private:
  z3::expr Bind(z3::expr e) {
    bound_.push_back(e);
    return e;
  }
  Symbols& s_;
  z3::expr_vector bound_;
  std::optional<z3::expr> even_;
};

struct AxiomDef {
  AxiomInfo info;
  std::function<z3::expr(Builder&)> build;  // the body, an equation
  Fires fires = Fires::kFromEitherSide;
};

// Element-wise algebra.
void AppendElementwiseLaws(std::vector<AxiomDef>& defs) {
  defs.insert(defs.end(), {
      {{"ewadd_assoc", "x+(y+z) = (x+y)+z"},
       [](Builder& b) { auto x = b.T("x"), y = b.T("y"), z = b.T("z"); return b.add(x, b.add(y, z)) == b.add(b.add(x, y), z); }},
      {{"ewadd_comm", "x+y = y+x"},
       [](Builder& b) { auto x = b.T("x"), y = b.T("y"); return b.add(x, y) == b.add(y, x); }},
      {{"ewmul_assoc", "x*(y*z) = (x*y)*z"},
       [](Builder& b) { auto x = b.T("x"), y = b.T("y"), z = b.T("z"); return b.mul(x, b.mul(y, z)) == b.mul(b.mul(x, y), z); }},
      {{"ewmul_comm", "x*y = y*x"},
       [](Builder& b) { auto x = b.T("x"), y = b.T("y"); return b.mul(x, y) == b.mul(y, x); }},
      // Broadcasting takes nothing from commutativity: models add a bias on
      // either side of a product, and a fused kernel's definition on one.
      {{"ewadd_bcast_comm", "x+y = y+x, shapes differing"},
       [](Builder& b) { auto x = b.T("x"), y = b.T("y"); return b.add_bcast(x, y) == b.add_bcast(y, x); }},
      {{"ewmul_bcast_comm", "x*y = y*x, shapes differing"},
       [](Builder& b) { auto x = b.T("x"), y = b.T("y"); return b.mul_bcast(x, y) == b.mul_bcast(y, x); }},
      {{"ewmul_distrib", "(x+y)*z = x*z + y*z"},
       [](Builder& b) { auto x = b.T("x"), y = b.T("y"), z = b.T("z"); return b.mul(b.add(x, y), z) == b.add(b.mul(x, z), b.mul(y, z)); }},
  });
}

// Scalar multiplication.
void AppendScalarMulLaws(std::vector<AxiomDef>& defs) {
  defs.insert(defs.end(), {
      {{"smul_assoc", "sm(sm(x,y),w) = sm(x,y*w)"},
       // y and w are scalars, so sm(y,w) is the element-wise product (symbols.h).
       [](Builder& b) { auto x = b.T("x"), y = b.T("y"), w = b.T("w"); return b.smul(b.smul(x, y), w) == b.smul(x, b.mul(y, w)); }},
      {{"smul_ewadd", "sm(x+y,w) = sm(x,w)+sm(y,w)"},
       [](Builder& b) { auto x = b.T("x"), y = b.T("y"), w = b.T("w"); return b.smul(b.add(x, y), w) == b.add(b.smul(x, w), b.smul(y, w)); }},
      {{"smul_ewmul", "sm(x*y,w) = x*sm(y,w)"},
       [](Builder& b) { auto x = b.T("x"), y = b.T("y"), w = b.T("w"); return b.smul(b.mul(x, y), w) == b.mul(x, b.smul(y, w)); }},
      {{"smul_transpose", "sm(T_p x,w) = T_p sm(x,w)"},
       [](Builder& b) { auto x = b.T("x"), w = b.T("w"); auto p = b.I("p"); return b.smul(b.tr(p, x), w) == b.tr(p, b.smul(x, w)); }},
      {{"smul_matmul", "sm(mm(x,y),w) = mm(x,sm(y,w))"},
       [](Builder& b) { auto x = b.T("x"), y = b.T("y"), w = b.T("w"); return b.smul(b.mm(x, y), w) == b.mm(x, b.smul(y, w)); }},
      {{"smul_concat", "sm(cat_a(x,y),w) = cat_a(sm(x,w),sm(y,w))"},
       [](Builder& b) { auto x = b.T("x"), y = b.T("y"), w = b.T("w"); auto a = b.I("a");
         return b.smul(b.cat(a, x, y), w) == b.cat(a, b.smul(x, w), b.smul(y, w)); }},
      {{"conv_smul", "conv_{s,p,c,g}(sm(x,w),y) = conv_{s,p,c,g}(x,sm(y,w))"},
       [](Builder& b) { auto x = b.T("x"), y = b.T("y"), w = b.T("w"); auto c = b.AnyConv(true);
         return b.conv(c, b.smul(x, w), y) == b.conv(c, x, b.smul(y, w)); }},
      {{"matmul_smul", "mm_c(sm(x,w),y) = mm_c(x,sm(y,w))"},
       [](Builder& b) { auto x = b.T("x"), y = b.T("y"), w = b.T("w"); auto act = b.I("act");
         return b.mm(act, b.smul(x, w), y) == b.mm(act, x, b.smul(y, w)); }},
      {{"smul_pool_avg", "avg(sm(x,w)) = sm(avg(x),w)"},
       [](Builder& b) { auto x = b.T("x"), w = b.T("w"); auto p = b.AnyPool(); auto inc = b.I("include_pad");
         return b.avg(p, b.smul(x, w), inc) == b.smul(b.avg(p, x, inc), w); }},
      {{"pool_avg_ewadd", "avg(x+y) = avg(x)+avg(y)"},
       [](Builder& b) { auto x = b.T("x"), y = b.T("y"); auto p = b.AnyPool(); auto inc = b.I("include_pad");
         return b.avg(p, b.add(x, y), inc) == b.add(b.avg(p, x, inc), b.avg(p, y, inc)); }, Fires::kFromLeft},
      {{"smul_conv", "sm(conv_{s,p,none,g}(x,y),w) = conv_{s,p,none,g}(sm(x,w),y)"},
       [](Builder& b) { auto x = b.T("x"), y = b.T("y"), w = b.T("w"); auto c = b.AnyConv(false);
         return b.smul(b.conv(c, x, y), w) == b.conv(c, b.smul(x, w), y); }},
  });
}

// Activations.
void AppendActivationLaws(std::vector<AxiomDef>& defs) {
  defs.insert(defs.end(), {
      {{"relu_conv", "relu(conv_{s,p,none,g}(x,y)) = conv_{s,p,relu,g}(x,y)"},
       [](Builder& b) { auto x = b.T("x"), y = b.T("y"); auto c = b.AnyConv(false);
         Builder::Conv r{c.sh, c.sw, c.pad, b.N(kActRelu), c.groups};
         return b.relu(b.conv(c, x, y)) == b.conv(r, x, y); }},
      {{"relu_matmul", "relu(mm(x,y)) = mm_relu(x,y)"},
       [](Builder& b) { auto x = b.T("x"), y = b.T("y"); return b.relu(b.mm(x, y)) == b.mm(b.N(kActRelu), x, y); }},
      {{"relu_concat", "relu(cat_a(x,y)) = cat_a(relu x, relu y)"},
       [](Builder& b) { auto x = b.T("x"), y = b.T("y"); auto a = b.I("a"); return b.relu(b.cat(a, x, y)) == b.cat(a, b.relu(x), b.relu(y)); }},
      {{"relu_transpose", "relu(T_p x) = T_p relu(x)"},
       [](Builder& b) { auto x = b.T("x"); auto p = b.I("p"); return b.relu(b.tr(p, x)) == b.tr(p, b.relu(x)); }},
  });
}

// cat_a(x∘y, z∘w) = cat_a(x,z) ∘ cat_a(y,w), ∘ the element-wise `op`; every
// concat with equal halves, or with the law's one flag.
z3::expr ConcatOfElementwise(Builder& b, const char* op, bool equal_halves) {
  auto x = b.T("x"), y = b.T("y"), z = b.T("z"), w = b.T("w");
  auto a = b.I("a");
  const z3::expr even = equal_halves ? b.N(1) : b.even();
  auto f = [&](const z3::expr& l, const z3::expr& r) { return b.Apply(op, {}, {l, r}); };
  return b.cat(a, even, f(x, y), f(z, w)) == f(b.cat(a, even, x, z), b.cat(a, even, y, w));
}

// cat_0(cat_1(x,y),cat_1(z,w)) = cat_1(cat_0(x,z),cat_0(y,w)), with the axis-1
// concats' halves equal or the axis-0 ones' (the other flag free).
z3::expr ConcatInterchange(Builder& b, bool even_cols) {
  auto x = b.T("x"), y = b.T("y"), z = b.T("z"), w = b.T("w");
  const z3::expr rows = even_cols ? b.I("even_rows") : b.N(1);
  const z3::expr cols = even_cols ? b.N(1) : b.I("even_cols");
  auto c0 = b.N(0), c1 = b.N(1);
  return b.cat(c0, rows, b.cat(c1, cols, x, y), b.cat(c1, cols, z, w)) ==
         b.cat(c1, cols, b.cat(c0, rows, x, z), b.cat(c0, rows, y, w));
}

// Linearity of convolution and matmul, and how they meet concat and split.
void AppendConvMatMulLaws(std::vector<AxiomDef>& defs) {
  defs.insert(defs.end(), {
      {{"conv_ewadd_weight", "conv_{s,p,none,g}(x,y+z) = conv(x,y)+conv(x,z)"},
       [](Builder& b) { auto x = b.T("x"), y = b.T("y"), z = b.T("z"); auto c = b.AnyConv(false);
         return b.conv(c, x, b.add(y, z)) == b.add(b.conv(c, x, y), b.conv(c, x, z)); }, Fires::kFromLeft},
      {{"conv_ewadd_input", "conv_{s,p,none,g}(x+y,z) = conv(x,z)+conv(y,z)"},
       [](Builder& b) { auto x = b.T("x"), y = b.T("y"), z = b.T("z"); auto c = b.AnyConv(false);
         return b.conv(c, b.add(x, y), z) == b.add(b.conv(c, x, z), b.conv(c, y, z)); }, Fires::kFromLeft},
      // Both sums over a concatenated inner dimension hold only for halves
      // of equal shape: read right to left, concats whose split points differ
      // (x 2 columns, y 3 rows) multiply x by rows of y and of w. Equal halves
      // align the split points, since the two concats' totals agree.
      {{"conv_concat_sum",
        "conv_{s,p,none,1}(x,y)+conv_{s,p,none,1}(z,w) = conv_{s,p,none,1}(cat_1^=(x,z),cat_1^=(y,w)), ^= halves of equal shape"},
       [](Builder& b) { auto x = b.T("x"), y = b.T("y"), z = b.T("z"), w = b.T("w");
         Builder::Conv c{b.I("sh"), b.I("sw"), b.I("pad"), b.N(kActNone), b.N(1)};
         const z3::expr even = b.N(1);
         return b.add(b.conv(c, x, y), b.conv(c, z, w)) ==
                b.conv(c, b.cat(b.N(1), even, x, z), b.cat(b.N(1), even, y, w)); }, Fires::kFromRight},
      {{"matmul_concat_sum", "mm(x,y)+mm(z,w) = mm(cat_1^=(x,z),cat_0^=(y,w)), ^= halves of equal shape"},
       [](Builder& b) { auto x = b.T("x"), y = b.T("y"), z = b.T("z"), w = b.T("w");
         const z3::expr even = b.N(1);
         return b.add(b.mm(x, y), b.mm(z, w)) == b.mm(b.cat(b.N(1), even, x, z), b.cat(b.N(0), even, y, w)); }, Fires::kFromRight},
      // From the sum of concats only where the halves are equal: otherwise
      // its typing does not say the two concats split at the same place.
      {{"concat_ewadd", "cat_a(x+y,z+w) = cat_a(x,z)+cat_a(y,w)"},
       [](Builder& b) { return ConcatOfElementwise(b, "ewadd", false); }, Fires::kFromLeft},
      {{"concat_ewadd_even", "cat_a^=(x+y,z+w) = cat_a^=(x,z)+cat_a^=(y,w), ^= halves of equal shape"},
       [](Builder& b) { return ConcatOfElementwise(b, "ewadd", true); }},
      {{"concat_ewmul", "cat_a(x*y,z*w) = cat_a(x,z)*cat_a(y,w)"},
       [](Builder& b) { return ConcatOfElementwise(b, "ewmul", false); }, Fires::kFromLeft},
      {{"concat_ewmul_even", "cat_a^=(x*y,z*w) = cat_a^=(x,z)*cat_a^=(y,w), ^= halves of equal shape"},
       [](Builder& b) { return ConcatOfElementwise(b, "ewmul", true); }},
      {{"concat_conv_batch", "cat_0(conv_{s,p,c,g}(x,z),conv_{s,p,c,g}(y,z)) = conv_{s,p,c,g}(cat_0(x,y),z)"},
       [](Builder& b) { auto x = b.T("x"), y = b.T("y"), z = b.T("z"); auto c = b.AnyConv(true);
         return b.cat(0, b.conv(c, x, z), b.conv(c, y, z)) == b.conv(c, b.cat(0, x, y), z); }, Fires::kFromRight},
      {{"concat_conv_channels", "cat_1(conv_{s,p,c,1}(x,y),conv_{s,p,c,1}(x,z)) = conv_{s,p,c,1}(x,cat_0(y,z))"},
       [](Builder& b) { auto x = b.T("x"), y = b.T("y"), z = b.T("z");
         Builder::Conv c{b.I("sh"), b.I("sw"), b.I("pad"), b.I("act"), b.N(1)};
         return b.cat(1, b.conv(c, x, y), b.conv(c, x, z)) == b.conv(c, x, b.cat(0, y, z)); }, Fires::kFromRight},
      // Only for halves of equal shape: with y and w of different output
      // counts, the grouped convolution's second group would start inside y.
      {{"concat_conv_grouped",
        "cat_1^=(conv_{s,p,c,1}(x,y),conv_{s,p,c,1}(z,w)) = conv_{s,p,c,2}(cat_1^=(x,z),cat_0^=(y,w)), ^= halves of equal shape"},
       [](Builder& b) { auto x = b.T("x"), y = b.T("y"), z = b.T("z"), w = b.T("w");
         Builder::Conv dense{b.I("sh"), b.I("sw"), b.I("pad"), b.I("act"), b.N(1)};
         Builder::Conv two{dense.sh, dense.sw, dense.pad, dense.act, b.N(2)};
         const z3::expr even = b.N(1);
         return b.cat(b.N(1), even, b.conv(dense, x, y), b.conv(dense, z, w)) ==
                b.conv(two, b.cat(b.N(1), even, x, z), b.cat(b.N(0), even, y, w)); }, Fires::kFromRight},
      {{"matmul_assoc", "mm(x,mm(y,z)) = mm(mm(x,y),z)"},
       [](Builder& b) { auto x = b.T("x"), y = b.T("y"), z = b.T("z"); return b.mm(x, b.mm(y, z)) == b.mm(b.mm(x, y), z); }},
      {{"split0_concat", "sp0_a(cat_a(x,y)) = x"},
       [](Builder& b) { auto x = b.T("x"), y = b.T("y"); auto a = b.I("a"); return b.split(0, a, b.cat(a, x, y)) == x; }},
      {{"split1_concat", "sp1_a(cat_a(x,y)) = y"},
       [](Builder& b) { auto x = b.T("x"), y = b.T("y"); auto a = b.I("a"); return b.split(1, a, b.cat(a, x, y)) == y; }},
      {{"matmul_concat_right", "mm(x,cat_1(y,z)) = cat_1(mm(x,y),mm(x,z))"},
       [](Builder& b) { auto x = b.T("x"), y = b.T("y"), z = b.T("z"); return b.mm(x, b.cat(1, y, z)) == b.cat(1, b.mm(x, y), b.mm(x, z)); }},
      {{"matmul_ewadd", "mm(x,y+z) = mm(x,y)+mm(x,z)"},
       [](Builder& b) { auto x = b.T("x"), y = b.T("y"), z = b.T("z"); return b.mm(x, b.add(y, z)) == b.add(b.mm(x, y), b.mm(x, z)); }},
      {{"matmul_ewadd_left", "mm(x+y,z) = mm(x,z)+mm(y,z)"},
       [](Builder& b) { auto x = b.T("x"), y = b.T("y"), z = b.T("z"); return b.mm(b.add(x, y), z) == b.add(b.mm(x, z), b.mm(y, z)); }},
      {{"matmul_concat_left", "mm(cat_0(x,y),z) = cat_0(mm(x,z),mm(y,z))"},
       [](Builder& b) { auto x = b.T("x"), y = b.T("y"), z = b.T("z"); return b.mm(b.cat(0, x, y), z) == b.cat(0, b.mm(x, z), b.mm(y, z)); }},
  });
}

// Transpose (2-D, perm (1,0)).
void AppendTransposeLaws(std::vector<AxiomDef>& defs) {
  defs.insert(defs.end(), {
      {{"transpose_involution", "T(T x) = x"},
       [](Builder& b) { auto x = b.T("x"); return b.tr2(b.tr2(x)) == x; }},
      {{"transpose_matmul", "T mm(x,y) = mm(T y,T x)"},
       [](Builder& b) { auto x = b.T("x"), y = b.T("y"); return b.tr2(b.mm(x, y)) == b.mm(b.tr2(y), b.tr2(x)); }},
      {{"transpose_concat", "T cat_0(x,y) = cat_1(T x,T y)"},
       [](Builder& b) { auto x = b.T("x"), y = b.T("y"); return b.tr2(b.cat(0, x, y)) == b.cat(1, b.tr2(x), b.tr2(y)); }},
      {{"transpose_concat_1", "T cat_1(x,y) = cat_0(T x,T y)"},
       [](Builder& b) { auto x = b.T("x"), y = b.T("y"); return b.tr2(b.cat(1, x, y)) == b.cat(0, b.tr2(x), b.tr2(y)); }},
      // Whether x and z have equal rows decides every axis-0 concat here;
      // whether x and y have equal columns, every axis-1 concat. The side
      // whose inner concats have equal halves fixes the other side's shapes:
      // with equal columns the left side's types imply the right's, with
      // equal rows the reverse. So the law is two, each used from its
      // determining side, and with neither flag set it is not stated.
      {{"concat_interchange_even_cols", "cat_0(cat_1^=(x,y),cat_1^=(z,w)) = cat_1^=(cat_0(x,z),cat_0(y,w))"},
       [](Builder& b) { return ConcatInterchange(b, true); }, Fires::kFromLeft},
      {{"concat_interchange_even_rows", "cat_0^=(cat_1(x,y),cat_1(z,w)) = cat_1(cat_0^=(x,z),cat_0^=(y,w))"},
       [](Builder& b) { return ConcatInterchange(b, false); }, Fires::kFromRight},
      {{"transpose_ewadd", "T(x+y) = T x + T y"},
       [](Builder& b) { auto x = b.T("x"), y = b.T("y"); return b.tr2(b.add(x, y)) == b.add(b.tr2(x), b.tr2(y)); }},
      {{"transpose_ewmul", "T(x*y) = T x * T y"},
       [](Builder& b) { auto x = b.T("x"), y = b.T("y"); return b.tr2(b.mul(x, y)) == b.mul(b.tr2(x), b.tr2(y)); }},
  });
}

// Pooling and concat.
void AppendPoolConcatLaws(std::vector<AxiomDef>& defs) {
  defs.insert(defs.end(), {
      {{"concat_pool_avg_channels", "cat_1(avg(x),avg(y)) = avg(cat_1(x,y))"},
       [](Builder& b) { auto x = b.T("x"), y = b.T("y"); auto p = b.AnyPool(); auto inc = b.I("include_pad");
         return b.cat(1, b.avg(p, x, inc), b.avg(p, y, inc)) == b.avg(p, b.cat(1, x, y), inc); }, Fires::kFromRight},
      {{"concat_pool_avg_batch", "cat_0(avg(x),avg(y)) = avg(cat_0(x,y))"},
       [](Builder& b) { auto x = b.T("x"), y = b.T("y"); auto p = b.AnyPool(); auto inc = b.I("include_pad");
         return b.cat(0, b.avg(p, x, inc), b.avg(p, y, inc)) == b.avg(p, b.cat(0, x, y), inc); }, Fires::kFromRight},
      {{"concat_pool_max_batch", "cat_0(max(x),max(y)) = max(cat_0(x,y))"},
       [](Builder& b) { auto x = b.T("x"), y = b.T("y"); auto p = b.AnyPool();
         return b.cat(0, b.max(p, x), b.max(p, y)) == b.max(p, b.cat(0, x, y)); }, Fires::kFromRight},
      {{"concat_pool_max_channels", "cat_1(max(x),max(y)) = max(cat_1(x,y))"},
       [](Builder& b) { auto x = b.T("x"), y = b.T("y"); auto p = b.AnyPool();
         return b.cat(1, b.max(p, x), b.max(p, y)) == b.max(p, b.cat(1, x, y)); }, Fires::kFromRight},
  });
}

// Constants.
void AppendConstantLaws(std::vector<AxiomDef>& defs) {
  defs.insert(defs.end(), {
      {{"conv_const_pool", "conv_{s,p,none,C}(x, Cp(C,1,kh,kw)) = avg_{kh,kw,s,p}(x)"},
       [](Builder& b) { auto x = b.T("x"); auto ch = b.I("channels"), kh = b.I("kh"), kw = b.I("kw");
         auto sh = b.I("sh"), sw = b.I("sw"), pad = b.I("pad");
         Builder::Conv c{sh, sw, pad, b.N(kActNone), ch};
         return b.conv(c, x, b.const_pool(ch, kh, kw)) == b.avg(Builder::Pool{kh, kw, sh, sw, pad}, x, b.N(1)); }},
      {{"conv_const_iconv", "conv_{1,SAME,none,1}(x, Ci(C,C,kh,kw)) = x"},
       [](Builder& b) { auto x = b.T("x"); auto ch = b.I("channels"), kh = b.I("kh"), kw = b.I("kw");
         Builder::Conv c{b.N(1), b.N(1), b.N(kPadSame), b.N(kActNone), b.N(1)};
         return b.conv(c, x, b.const_iconv(ch, ch, kh, kw)) == x; }},
      {{"conv_const_iconv_depthwise", "conv_{1,SAME,none,C}(x, Ci(C,1,kh,kw)) = x"},
       [](Builder& b) { auto x = b.T("x"); auto ch = b.I("channels"), kh = b.I("kh"), kw = b.I("kw");
         Builder::Conv c{b.N(1), b.N(1), b.N(kPadSame), b.N(kActNone), ch};
         return b.conv(c, x, b.const_iconv(ch, b.N(1), kh, kw)) == x; }},
      {{"matmul_identity", "mm(x, I) = x"},
       [](Builder& b) { auto x = b.T("x"); auto n = b.I("n"); return b.mm(x, b.const_imatmul(n)) == x; }},
      {{"matmul_identity_left", "mm(I, x) = x"},
       [](Builder& b) { auto x = b.T("x"); auto n = b.I("n"); return b.mm(b.const_imatmul(n), x) == x; }},
      {{"transpose_identity", "T(I) = I"},
       [](Builder& b) { auto n = b.I("n"); return b.tr2(b.const_imatmul(n)) == b.const_imatmul(n); }},
      {{"ewmul_ones_2d", "x * 1(d0,d1) = x"},
       [](Builder& b) { auto x = b.T("x"); auto d0 = b.I("d0"), d1 = b.I("d1");
         return b.mul(x, b.Apply("const_ones_r2", {d0, d1}, {})) == x; }},
      {{"ewmul_ones_4d", "x * 1(d0,d1,d2,d3) = x"},
       [](Builder& b) { auto x = b.T("x"); auto d0 = b.I("d0"), d1 = b.I("d1"), d2 = b.I("d2"), d3 = b.I("d3");
         return b.mul(x, b.Apply("const_ones_r4", {d0, d1, d2, d3}, {})) == x; }},
      {{"pool_avg_const_iconv_depthwise", "avg_{kh,kw,1,SAME}(Ci(C,1,kh,kw)) = Cp(C,1,kh,kw)"},
       [](Builder& b) { auto ch = b.I("channels"), kh = b.I("kh"), kw = b.I("kw");
         Builder::Pool p{kh, kw, b.N(1), b.N(1), b.N(kPadSame)};
         return b.avg(p, b.const_iconv(ch, b.N(1), kh, kw), b.N(1)) == b.const_pool(ch, kh, kw); }},
      {{"conv_pool_avg_const_iconv", "conv_{s,p,none,1}(x, avg_{kh,kw,1,SAME}(Ci(C,C,kh,kw))) = avg_{kh,kw,s,p}(x)"},
       [](Builder& b) { auto x = b.T("x"); auto ch = b.I("channels"), kh = b.I("kh"), kw = b.I("kw");
         auto sh = b.I("sh"), sw = b.I("sw"), pad = b.I("pad");
         Builder::Conv c{sh, sw, pad, b.N(kActNone), b.N(1)};
         Builder::Pool window{kh, kw, b.N(1), b.N(1), b.N(kPadSame)};
         return b.conv(c, x, b.avg(window, b.const_iconv(ch, ch, kh, kw), b.N(1))) ==
                b.avg(Builder::Pool{kh, kw, sh, sw, pad}, x, b.N(1)); }},
      {{"conv_enlarge", "conv_{1,SAME,c,g}(x,y) = conv_{1,SAME,c,g}(x,enl_{kh,kw}(y))"},
       [](Builder& b) { auto x = b.T("x"), y = b.T("y"); auto kh = b.I("kh"), kw = b.I("kw");
         Builder::Conv c{b.N(1), b.N(1), b.N(kPadSame), b.I("act"), b.I("groups")};
         return b.conv(c, x, y) == b.conv(c, x, b.enlarge(kh, kw, y)); }},
  });
}

// What the constants' values give (issue 13: size-3 pairs left unknown).
// Each law's sides exist on exactly the same shapes, so it equates no
// real term with one that cannot exist.
void AppendConstantValueLaws(std::vector<AxiomDef>& defs) {
  defs.insert(defs.end(), {
      {{"ewmul_imatmul_idempotent", "I * I = I"},
       [](Builder& b) { auto n = b.I("n"); return b.mul(b.const_imatmul(n), b.const_imatmul(n)) == b.const_imatmul(n); }},
      // x * I is diagonal, and a diagonal matrix is its own transpose.
      {{"transpose_diagonal", "T(x * I) = x * I"},
       [](Builder& b) { auto x = b.T("x"); auto n = b.I("n");
         return b.tr2(b.mul(x, b.const_imatmul(n))) == b.mul(x, b.const_imatmul(n)); }},
      // The dense identity kernel (C,C): the one the generator's spec has. A
      // free input-channel count would state the law for shapes no Ci has.
      {{"ewmul_iconv_idempotent", "Ci(C,C) * Ci(C,C) = Ci(C,C)"},
       [](Builder& b) { auto ch = b.I("channels");
         auto ci = b.const_iconv(ch, ch, b.I("kh"), b.I("kw"));
         return b.mul(ci, ci) == ci; }},
      // Max pooling ignores padding, so a window of a constant is that
      // constant; stride 1 and SAME keep the shape the constant names.
      {{"pool_max_ones", "max_{kh,kw,1,SAME}(1) = 1"},
       [](Builder& b) { auto ones = b.ones4(); return b.max(b.UnitPool(), ones) == ones; }},
      {{"pool_max_ewadd_ones", "max_{kh,kw,1,SAME}(x + 1) = max_{kh,kw,1,SAME}(x) + 1"},
       [](Builder& b) { auto x = b.T("x"); auto ones = b.ones4(); auto p = b.UnitPool();
         return b.max(p, b.add(x, ones)) == b.add(b.max(p, x), ones); }},
      {{"pool_max_const_pool", "max_{kh,kw,1,SAME}(Cp) = Cp"},
       [](Builder& b) { auto cp = b.const_pool(b.I("channels"), b.I("d2"), b.I("d3")); return b.max(b.UnitPool(), cp) == cp; }},
      {{"pool_max_ewadd_const_pool", "max_{kh,kw,1,SAME}(x + Cp) = max_{kh,kw,1,SAME}(x) + Cp"},
       [](Builder& b) { auto x = b.T("x"); auto cp = b.const_pool(b.I("channels"), b.I("d2"), b.I("d3"));
         auto p = b.UnitPool();
         return b.max(p, b.add(x, cp)) == b.add(b.max(p, x), cp); }},
      // Ones times a scalar is the scalar everywhere, so relu passes through.
      {{"relu_smul_ones", "relu(sm(1, s)) = sm(1, relu s)"},
       [](Builder& b) { auto s = b.T("s"); auto ones = b.ones4();
         return b.relu(b.smul(ones, s)) == b.smul(ones, b.relu(s)); }},
      // Convolving the identity kernel, as data, with w moves each entry of w
      // to one place (a rotation and a swap of w's channel axes) and fills
      // the rest with zeros: each output is one weight or 0.
      // Stated for a dense and a depthwise convolution of the dense Ci (C,C):
      // a free group count would include counts that do not divide C.
      {{"relu_conv_iconv_input", "relu(conv_{s,p,none,1}(Ci(C,C), w)) = conv_{s,p,none,1}(Ci(C,C), relu w)"},
       [](Builder& b) { auto w = b.T("w"); auto ch = b.I("channels");
         Builder::Conv c{b.I("sh"), b.I("sw"), b.I("pad"), b.N(kActNone), b.N(1)};
         auto ci = b.const_iconv(ch, ch, b.I("kh"), b.I("kw"));
         return b.relu(b.conv(c, ci, w)) == b.conv(c, ci, b.relu(w)); }},
      {{"relu_conv_iconv_input_depthwise",
        "relu(conv_{s,p,none,C}(Ci(C,C), w)) = conv_{s,p,none,C}(Ci(C,C), relu w)"},
       [](Builder& b) { auto w = b.T("w"); auto ch = b.I("channels");
         Builder::Conv c{b.I("sh"), b.I("sw"), b.I("pad"), b.N(kActNone), ch};
         auto ci = b.const_iconv(ch, ch, b.I("kh"), b.I("kw"));
         return b.relu(b.conv(c, ci, w)) == b.conv(c, ci, b.relu(w)); }},
      // Two kernels set only on the centre diagonal (x * Ci) convolve, as
      // data and weight, to their product; with Ci * Ci = Ci this also gives
      // conv(Ci, x * Ci) = x * Ci.
      {{"conv_diagonals", "conv_{1,SAME,none,1}(x * Ci, y * Ci) = x * (y * Ci)"},
       [](Builder& b) { auto x = b.T("x"), y = b.T("y"); auto ch = b.I("channels");
         auto ci = b.const_iconv(ch, ch, b.I("kh"), b.I("kw"));
         return b.conv(b.UnitConv(), b.mul(x, ci), b.mul(y, ci)) == b.mul(x, b.mul(y, ci)); }},
  });
}

// The axioms in a fixed order: the order is part of AxiomSetVersion and of
// `axioms list`.
const std::vector<AxiomDef>& Definitions() {
  static const auto* defs = [] {
    auto* list = new std::vector<AxiomDef>;
    AppendElementwiseLaws(*list);
    AppendScalarMulLaws(*list);
    AppendActivationLaws(*list);
    AppendConvMatMulLaws(*list);
    AppendTransposeLaws(*list);
    AppendPoolConcatLaws(*list);
    AppendConstantLaws(*list);
    AppendConstantValueLaws(*list);
    return list;
  }();
  return *defs;
}

void CollectFunctions(const z3::expr& e, std::set<std::string>& out) {
  if (e.is_app()) {
    const z3::func_decl d = e.decl();
    // Operators are the uninterpreted functions into the tensor sort; bound
    // and rule variables are the nullary ones.
    if (d.decl_kind() == Z3_OP_UNINTERPRETED && d.arity() > 0 && d.range().sort_kind() == Z3_UNINTERPRETED_SORT) {
      out.insert(d.name().str());
    }
    for (unsigned i = 0; i < e.num_args(); ++i) CollectFunctions(e.arg(i), out);
  } else if (e.is_quantifier()) {
    CollectFunctions(e.body(), out);
  }
}

// The axiom's patterns: the sides it fires from, each of which must bind every
// variable (Z3 could not instantiate it from a side that does not). Whole
// sides, not smaller terms: a subterm's typing says nothing of the term
// around it (x+y of 4-D tensors is well-typed, its 2-D transpose is not).
absl::StatusOr<std::vector<z3::expr>> Triggers(const AxiomDef& d, const z3::expr_vector& bound, const z3::expr& body) {
  std::vector<z3::expr> vars;
  for (unsigned i = 0; i < bound.size(); ++i) vars.push_back(bound[i]);
  const z3::expr lhs = body.arg(0), rhs = body.arg(1);
  // A side binds every variable when it is a term covering them all.
  const bool left = !MinimalTriggers(vars, lhs, lhs).empty(), right = !MinimalTriggers(vars, rhs, rhs).empty();
  if ((d.fires == Fires::kFromLeft && !left) || (d.fires == Fires::kFromRight && !right) || (!left && !right)) {
    return absl::InternalError(absl::StrCat(d.info.name, ": the side it fires from does not bind every variable"));
  }
  std::vector<z3::expr> out;
  if (d.fires != Fires::kFromRight && left) out.push_back(lhs);
  if (d.fires != Fires::kFromLeft && right) out.push_back(rhs);
  return out;
}

z3::expr Quantify(const z3::expr_vector& bound, const z3::expr& body, const std::vector<z3::expr>& triggers) {
  z3::context& ctx = body.ctx();
  std::vector<Z3_app> vars;
  for (unsigned i = 0; i < bound.size(); ++i) vars.push_back(Z3_to_app(ctx, bound[i]));
  std::vector<Z3_pattern> patterns;
  std::vector<z3::ast> held;  // the context counts references: a pattern nobody holds may be freed
  for (const z3::expr& t : triggers) {
    Z3_ast term = t;
    patterns.push_back(Z3_mk_pattern(ctx, 1, &term));
    ctx.check_error();
    held.emplace_back(ctx, Z3_pattern_to_ast(ctx, patterns.back()));
  }
  Z3_ast q = Z3_mk_forall_const(ctx, 0, static_cast<unsigned>(vars.size()), vars.data(),
                                static_cast<unsigned>(patterns.size()), patterns.data(), body);
  ctx.check_error();
  return z3::expr(ctx, q);
}

}  // namespace

std::vector<z3::expr> MinimalTriggers(const std::vector<z3::expr>& vars, const z3::expr& lhs, const z3::expr& rhs) {
  std::map<unsigned, uint64_t> mentions;  // by term id: bit i for vars[i]
  std::function<uint64_t(const z3::expr&)> walk = [&](const z3::expr& e) -> uint64_t {
    for (size_t i = 0; i < vars.size() && i < 64; ++i) {
      if (z3::eq(vars[i], e)) return uint64_t{1} << i;
    }
    if (auto it = mentions.find(e.id()); it != mentions.end()) return it->second;
    uint64_t bits = 0;
    for (unsigned i = 0; i < e.num_args(); ++i) bits |= walk(e.arg(i));
    return mentions[e.id()] = bits;
  };
  const uint64_t all = vars.size() >= 64 ? ~uint64_t{0} : (uint64_t{1} << vars.size()) - 1;
  std::vector<z3::expr> out;
  std::function<void(const z3::expr&)> find = [&](const z3::expr& e) {
    if (walk(e) != all || !e.is_app() || e.num_args() == 0) return;
    bool child_covers = false;  // a smaller application binds them all (a bare variable is no trigger)
    for (unsigned i = 0; i < e.num_args(); ++i) {
      child_covers |= walk(e.arg(i)) == all && e.arg(i).is_app() && e.arg(i).num_args() > 0;
    }
    if (child_covers) {
      for (unsigned i = 0; i < e.num_args(); ++i) find(e.arg(i));
    } else if (std::none_of(out.begin(), out.end(), [&](const z3::expr& t) { return z3::eq(t, e); })) {
      out.push_back(e);
    }
  };
  find(lhs);
  find(rhs);
  return out;
}

const std::vector<AxiomInfo>& AxiomList() {
  static const auto* list = [] {
    auto* l = new std::vector<AxiomInfo>;
    for (const AxiomDef& d : Definitions()) l->push_back(d.info);
    return l;
  }();
  return *list;
}

std::string AxiomSetVersion() {
  Hasher h;
  for (const AxiomDef& d : Definitions()) {
    h.AddString(d.info.name);
    h.AddString(d.info.description);
    h.AddString(d.fires == Fires::kFromLeft ? "left" : d.fires == Fires::kFromRight ? "right" : "either");
  }
  return absl::StrCat("axioms-", AxiomList().size(), "-", h.Finish().ToHex().substr(0, 12));
}

absl::StatusOr<std::vector<BuiltAxiom>> BuildAxioms(Symbols& symbols, const std::set<std::string>& only,
                                                     const std::set<std::string>& skip) {
  for (const std::string& name : only) {
    bool known = false;
    for (const AxiomDef& d : Definitions()) known |= d.info.name == name;
    if (!known) return absl::InvalidArgumentError(absl::StrCat("no axiom named '", name, "'"));
  }
  std::vector<BuiltAxiom> out;
  try {
    for (const AxiomDef& d : Definitions()) {
      if (!only.empty() && !only.count(d.info.name)) continue;
      if (skip.count(d.info.name)) continue;
      Builder b(symbols);
      z3::expr body = d.build(b);
      z3::expr formula = body;
      if (!b.bound().empty()) {
        auto triggers = Triggers(d, b.bound(), body);
        if (!triggers.ok()) return triggers.status();
        formula = Quantify(b.bound(), body, *triggers);
      }
      BuiltAxiom built{d.info, formula, {}};
      CollectFunctions(body, built.functions);
      out.push_back(std::move(built));
    }
  } catch (const z3::exception& e) {
    if (Z3_get_error_code(symbols.ctx()) == Z3_MEMOUT_FAIL) {
      return absl::ResourceExhaustedError(absl::StrCat("building axioms: ", e.msg()));
    }
    return absl::InternalError(absl::StrCat("building axioms: ", e.msg()));
  }
  return out;
}

}  // namespace taso::verifier
