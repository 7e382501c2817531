#include "costs/signature_text.h"

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace taso::profiler {
namespace {

absl::Status Bad(const std::string& text, const std::string& why) {
  return absl::InvalidArgumentError(absl::StrCat("signature '", text, "': ", why));
}

absl::StatusOr<std::vector<int64_t>> Ints(const std::string& list, char sep) {
  std::vector<int64_t> out;
  if (list.empty()) return out;
  for (absl::string_view part : absl::StrSplit(list, sep)) {
    int64_t v;
    if (!absl::SimpleAtoi(part, &v)) return absl::InvalidArgumentError(absl::StrCat("'", list, "' is not a list of integers"));
    out.push_back(v);
  }
  return out;
}

absl::StatusOr<std::pair<int, int>> Pair(const std::string& value) {
  auto v = Ints(value, 'x');
  if (!v.ok() || v->size() != 2) return absl::InvalidArgumentError(absl::StrCat("'", value, "' is not HxW"));
  return std::make_pair(static_cast<int>((*v)[0]), static_cast<int>((*v)[1]));
}

absl::Status SetParam(OpParams& p, const std::string& name, const std::string& value) {
  if (name == "stride" || name == "kernel") {
    auto hw = Pair(value);
    if (!hw.ok()) return hw.status();
    (name == "stride" ? p.stride_h : p.kernel_h) = hw->first;
    (name == "stride" ? p.stride_w : p.kernel_w) = hw->second;
  } else if (name == "pad") {
    absl::string_view pads = value;
    if (absl::ConsumePrefix(&pads, "explicit:")) {
      auto v = Ints(std::string(pads), ',');
      if (!v.ok() || v->size() != 4) return absl::InvalidArgumentError("pad=explicit:TOP,LEFT,BOTTOM,RIGHT");
      p.padding = Padding::kExplicit;
      p.pads.assign(v->begin(), v->end());
      return absl::OkStatus();
    }
    if (value != "same" && value != "valid") return absl::InvalidArgumentError("pad is same, valid or explicit:T,L,B,R");
    p.padding = value == "same" ? Padding::kSame : Padding::kValid;
  } else if (name == "act") {
    for (Activation a : {Activation::kNone, Activation::kRelu, Activation::kSigmoid, Activation::kTanh}) {
      if (value == ActivationName(a)) {
        p.activation = a;
        return absl::OkStatus();
      }
    }
    return absl::InvalidArgumentError("act is none, relu, sigmoid or tanh");
  } else if (name == "count_pad" || name == "shuffle") {
    if (value != "0" && value != "1") return absl::InvalidArgumentError(absl::StrCat(name, " is 0 or 1"));
    (name == "shuffle" ? p.shuffle : p.count_include_pad) = value == "1";
  } else if (name == "perm") {
    auto v = Ints(value, ',');
    if (!v.ok()) return v.status();
    p.perm.assign(v->begin(), v->end());
  } else if (name == "sizes" || name == "shape") {
    auto v = Ints(value, ',');
    if (!v.ok()) return v.status();
    (name == "sizes" ? p.sizes : p.shape) = *v;
  } else if (name == "axis" || name == "groups" || name == "count") {
    int v;
    if (!absl::SimpleAtoi(value, &v)) return absl::InvalidArgumentError(absl::StrCat(name, " is an integer"));
    (name == "axis" ? p.axis : name == "groups" ? p.groups : p.count) = v;
  } else if (name == "eps") {
    if (!absl::SimpleAtof(value, &p.epsilon)) return absl::InvalidArgumentError("eps is a number");
  } else {
    return absl::InvalidArgumentError(absl::StrCat("unknown parameter '", name, "'"));
  }
  return absl::OkStatus();
}

// "f32[1,64,56,56]" or "f32[4,2]{strides=1,4}".
absl::StatusOr<TensorType> ParseType(const std::string& text) {
  const size_t open = text.find('[');
  const size_t close = text.find(']');
  if (open == std::string::npos || close == std::string::npos || close < open) {
    return absl::InvalidArgumentError(absl::StrCat("'", text, "' is not a tensor type like f32[1,3,224,224]"));
  }
  const std::string dtype = text.substr(0, open);
  if (dtype != "f32" && dtype != "i32") {
    return absl::InvalidArgumentError(absl::StrCat("element type '", dtype, "' is not f32 or i32"));
  }
  auto dims = Ints(text.substr(open + 1, close - open - 1), ',');
  if (!dims.ok()) return dims.status();
  if (absl::Status s = CheckDims(*dims); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("'", text, "': ", s.message()));
  }
  TensorType t = TensorType::RowMajor(dtype == "f32" ? DType::kFloat32 : DType::kInt32, *dims);
  absl::string_view rest = absl::string_view(text).substr(close + 1);
  if (rest.empty()) return t;
  if (!absl::ConsumePrefix(&rest, "{strides=") || !absl::ConsumeSuffix(&rest, "}")) {
    return absl::InvalidArgumentError(absl::StrCat("'", text, "': only {strides=...} may follow the dims"));
  }
  auto strides = Ints(std::string(rest), ',');
  if (!strides.ok()) return strides.status();
  if (strides->size() != dims->size()) {
    return absl::InvalidArgumentError(absl::StrCat("'", text, "' has ", dims->size(), " dims but ",
                                                   strides->size(), " strides"));
  }
  t.strides = *strides;
  return t;
}

// Splits "a,b[c,d],e{f,g}" at top-level commas.
std::vector<std::string> TopLevelSplit(const std::string& s) {
  std::vector<std::string> parts;
  int depth = 0;
  std::string cur;
  for (char c : s) {
    if (c == '[' || c == '{' || c == '(') ++depth;
    if (c == ']' || c == '}' || c == ')') --depth;
    if (c == ',' && depth == 0) {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) parts.push_back(cur);
  return parts;
}

}  // namespace

absl::StatusOr<Signature> ParseSignature(const std::string& raw) {
  std::string text;
  for (char c : raw) {
    if (c != ' ' && c != '\t' && c != '\n') text += c;
  }
  // Keys of splits end in their part sizes, keys of constants in their shape.
  std::string split_sizes;
  if (const size_t arrow = text.rfind(")->["); arrow != std::string::npos && text.back() == ']') {
    split_sizes = text.substr(arrow + 4, text.size() - arrow - 5);
    text.resize(arrow + 1);
  } else if (const size_t end = text.rfind(")["); end != std::string::npos && text.back() == ']') {
    text.resize(end + 1);
  }
  const size_t paren = text.find('(');
  if (paren == std::string::npos || text.back() != ')') {
    return Bad(raw, "expected OP[params](TYPE,...), e.g. relu(f32[1,64,56,56])");
  }
  std::string head = text.substr(0, paren);
  const std::string args = text.substr(paren + 1, text.size() - paren - 2);
  std::string params;
  if (const size_t bracket = head.find('['); bracket != std::string::npos) {
    if (head.back() != ']') return Bad(raw, "parameters must end with ']'");
    params = head.substr(bracket + 1, head.size() - bracket - 2);
    head = head.substr(0, bracket);
  }
  auto kind = OpKindFromName(head);
  if (!kind) return Bad(raw, absl::StrCat("unknown operator '", head, "'"));
  if (*kind == OpKind::kOpaque) return Bad(raw, "opaque operators have no text form");
  Signature s;
  s.kind = *kind;
  // "perm=1,0,shuffle=1": a piece without '=' continues the previous value.
  std::vector<std::pair<std::string, std::string>> assignments;
  for (absl::string_view piece_view : absl::StrSplit(params, ',', absl::SkipEmpty())) {
    const std::string piece(piece_view);
    const size_t eq = piece.find('=');
    if (eq == std::string::npos) {
      if (assignments.empty()) return Bad(raw, absl::StrCat("'", piece, "' is not name=value"));
      absl::StrAppend(&assignments.back().second, ",", piece);
    } else {
      assignments.emplace_back(piece.substr(0, eq), piece.substr(eq + 1));
    }
  }
  for (const auto& [name, value] : assignments) {
    absl::Status st = SetParam(s.params, name, value);
    if (!st.ok()) return Bad(raw, std::string(st.message()));
  }
  if (!split_sizes.empty()) {
    absl::Status st = SetParam(s.params, "sizes", split_sizes);
    if (!st.ok()) return Bad(raw, std::string(st.message()));
  }
  for (const std::string& arg : TopLevelSplit(args)) {
    auto t = ParseType(arg);
    if (!t.ok()) return Bad(raw, std::string(t.status().message()));
    s.inputs.push_back(*t);
  }
  return s;
}

}  // namespace taso::profiler
