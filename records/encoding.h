// The compact form in which the generator sends an enumerated graph to the
// store: a few bytes per operator instead of a serialized IR graph, because
// size-3 and size-4 jobs move tens of millions to billions of graphs.
//
// Format, per operator in enumeration order:
//   [template index][input count][pool index of each input]
// all single bytes. The pool holds the spec's variables (indices 0..V-1)
// followed by every operator output in order. The graph's outputs are the
// operator outputs no operator reads. Decoding needs the same spec.
#ifndef TASO_RECORDS_ENCODING_H_
#define TASO_RECORDS_ENCODING_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "core/graph.h"
#include "records/spec.h"

namespace taso::records {

// The most pool entries one encoding can address.
inline constexpr int kMaxPoolEntries = 255;

struct EncodedOp {
  int template_index = 0;
  std::vector<int> inputs;  // pool indices
};

absl::StatusOr<std::vector<EncodedOp>> ParseEncoding(std::string_view encoding);
void AppendEncodedOp(int template_index, const int* inputs, int num_inputs, std::string& out);

// Rebuilds the graph. Variables become graph inputs (spec `inputs`) or
// weights (spec `constants`) under their spec names; only used ones appear.
// `variable_renaming`, if non-empty, maps each variable index to the index
// whose name and type it takes (for renaming-symmetry checks).
absl::StatusOr<Graph> DecodeGraph(const Spec& spec, std::string_view encoding,
                                  const std::vector<int>& variable_renaming = {});

// Human-readable form, e.g. "matmul(x1, w1); relu(%0)".
std::string DescribeEncoding(const Spec& spec, std::string_view encoding);

}  // namespace taso::records

#endif  // TASO_RECORDS_ENCODING_H_
