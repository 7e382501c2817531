// What happens to a fingerprint class before its pairs reach the verifier.
// The store runs this when a job's enumeration is complete (see
// rules_db/hash_store.cc), because only the store sees a whole class: its
// members may come from different generator shards.
//
//  1. Renaming order: spec tensors with the same type and role (x1, x2, x3)
//     are interchangeable, so every rule exists once per renaming. A member is
//     "canonical" when no permutation of interchangeable tensors gives it a
//     smaller key; any pair can be renamed so that one side is canonical, so
//     pairs need a canonical side and classes without one give none (TASO's
//     variable-ordering check, made exact). The key ignores the operand
//     order of commutative operators, which the enumerator tries in one
//     order only; every renaming of a graph enumerated is enumerated (see
//     enumerator.h), so every orbit's least member is a graph produced.
//  2. Pairs: a star from the first canonical member (in encoding order) to
//     every other member; equality is transitive, so the star covers the class.
//  3. Exact re-check of each pair, on inputs other than the fingerprint's:
//     int32 with wrap-around on a second seed, outputs matched as multisets
//     and equal bit for bit; then float32 on inputs in [-1, 1], every element
//     within tolerance * max(1, |a|, |b|). A failing pair is kept, marked
//     rejected, with the reason.
#ifndef TASO_GENERATOR_RECHECK_H_
#define TASO_GENERATOR_RECHECK_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/interpreter.h"
#include "records/class_check.h"
#include "records/encoding.h"
#include "records/spec.h"

namespace taso::generator {

// The result types live in records/: the hash store stores them.
using records::ClassCheck;
using records::PairCheck;

struct RecheckOptions {
  // Seeds derive from the spec's; they only need to differ from it.
  uint64_t int_seed_offset = 0x5eed0001;
  uint64_t float_seed_offset = 0x5eed0002;
  double tolerance = 1e-5;
};

class Rechecker {
 public:
  explicit Rechecker(const records::Spec& spec, const RecheckOptions& options = {});

  // TASO's pair checks on two encodings (see PairCheck::taso_would_drop).
  bool TasoWouldDrop(const std::string& a, const std::string& b) const;

  // Whether `encoding` is the least of its renamings.
  bool IsCanonicalOrder(const std::string& encoding) const;

  // `members`: the class's graph encodings, distinct, in a fixed order.
  ClassCheck Check(const std::vector<std::string>& members) const;

 private:
  // The key of `ops` with variable v renamed to renaming[v]; `pool` (the
  // operators' outputs) and `op_keys` are scratch space.
  uint64_t RenamedKey(const std::vector<records::EncodedOp>& ops, const std::vector<int>& renaming,
                      std::vector<uint64_t>& pool, std::vector<uint64_t>& op_keys) const;

  records::Spec spec_;
  RecheckOptions options_;
  std::vector<std::vector<int>> groups_;  // interchangeable variable indices, size >= 2
  std::vector<int> group_of_;             // variable -> index in groups_, or -1
  std::vector<uint64_t> variable_keys_;   // variable -> its key in RenamedKey, before renaming
  std::map<std::string, IntTensor> int_feeds_;
  std::map<std::string, FloatTensor> float_feeds_;
};

// The store's class check for a job (records::ClassCheckerFactory): a
// Rechecker of the job's spec, shared by the threads that call it.
records::ClassChecker RecheckerFor(const records::Spec& spec);

}  // namespace taso::generator

#endif  // TASO_GENERATOR_RECHECK_H_
