#include "core/sexpr.h"

#include <cctype>

#include "absl/strings/str_cat.h"

namespace taso {

absl::StatusOr<Sexpr> SexprReader::Read() {
  Skip();
  if (pos_ >= text_.size()) return Error("unexpected end");
  if (text_[pos_] == ')') return Error("unexpected ')'");
  if (text_[pos_] == '(') {
    ++pos_;
    Sexpr list;
    list.is_list = true;
    while (true) {
      Skip();
      if (pos_ >= text_.size()) return Error("missing ')'");
      if (text_[pos_] == ')') {
        ++pos_;
        return list;
      }
      auto item = Read();
      if (!item.ok()) return item.status();
      list.items.push_back(std::move(*item));
    }
  }
  const size_t start = pos_;
  while (pos_ < text_.size() && !std::isspace(static_cast<unsigned char>(text_[pos_])) && text_[pos_] != '(' &&
         text_[pos_] != ')') {
    ++pos_;
  }
  return Sexpr{std::string(text_.substr(start, pos_ - start)), {}, false};
}

bool SexprReader::AtEnd() {
  Skip();
  return pos_ >= text_.size();
}

void SexprReader::Skip() {
  while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
}

absl::Status SexprReader::Error(const std::string& what) const {
  return absl::InvalidArgumentError(absl::StrCat("column ", pos_ + 1, ": ", what));
}

std::string WriteSexpr(const Sexpr& e) {
  if (!e.is_list) return e.atom;
  std::string out = "(";
  for (size_t i = 0; i < e.items.size(); ++i) absl::StrAppend(&out, i > 0 ? " " : "", WriteSexpr(e.items[i]));
  return out + ")";
}

}  // namespace taso
