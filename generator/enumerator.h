// Depth-first enumeration of every graph of up to `max_ops` operators over a
// generation spec, fingerprinted on the spec's deterministic int32 inputs.
//
// What is enumerated (the generator's semantics; see docs/rules.md, "Generation"):
//  - Each graph (DAG) once: operators are appended only in the graph's least
//    topological order by operator key, so the k! orders of k independent
//    operators are one graph, not k! (TASO enumerated every order).
//  - A graph in which a new operator's output equals a tensor already present
//    (an input, a weight or another operator's output) is pruned with its
//    whole subtree: that operator is an identity or a duplicate.
//  - Operand rules: ewadd/ewmul take two distinct operands, unordered;
//    matmul, concat and scalar_mul two distinct operands, ordered (a spec's
//    `unordered_operands` keeps one order: the one in which the renaming
//    groups its operands are computed from compare in order, both
//    where they tie or one is a constant computed from no spec tensor, so
//    every renaming of a graph enumerated is enumerated too); conv2d's
//    input is never a raw weight; enlarge applies only to weights (spec
//    `constants`); split applies only where shape inference allows it (an
//    axis that carries a concat's split point). Relu is x(x+1)+1 in int32.
//
// Sharding: every shard walks the tree down to the "split depth" (max_ops-1,
// at least 1), numbering the graphs there in DFS order. Graph number k and its
// subtree belong to shard k mod n; the shallower graphs belong to shard 0. The
// numbering is the same in every shard, so the union over shards is exactly the
// single-process enumeration, and k is a resume cursor.
#ifndef TASO_GENERATOR_ENUMERATOR_H_
#define TASO_GENERATOR_ENUMERATOR_H_

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"
#include "core/fingerprint.h"
#include "records/spec.h"

namespace taso::generator {

struct EnumerationOptions {
  int max_ops = 3;
  int shard = 0;
  int num_shards = 1;
  // Resume: subtrees numbered below this were finished by an earlier run.
  int64_t start_cursor = 0;
};

struct EnumerationStats {
  int64_t graphs = 0;                // emitted by this shard
  int64_t graphs_by_size[records::kMaxOpsLimit + 1] = {};
  int64_t pruned_equal_tensor = 0;   // operators whose output already existed
  int64_t pruned_order = 0;          // operator orders that are not the graph's least
  int64_t evaluations = 0;           // operators evaluated (including pruned ones)
  int64_t evaluations_reused = 0;    // operators whose value an earlier sibling evaluated
  int64_t subtrees = 0;              // split-depth subtrees this shard finished
  int64_t cursor = 0;                // next subtree number after the last finished
  bool cancelled = false;
};

class GraphSink {
 public:
  virtual ~GraphSink() = default;
  // One graph: its fingerprint and its encoding (see encoding.h).
  virtual void OnGraph(const Fingerprint& fingerprint, std::string_view encoding, int num_ops) = 0;
  // Every graph of this shard numbered below `next_cursor` has been passed to
  // OnGraph. `done_fraction` estimates the share of the tree walked.
  // Returning false stops the enumeration (it reports cancelled).
  virtual bool OnCheckpoint(int64_t next_cursor, double done_fraction) = 0;
};

absl::StatusOr<EnumerationStats> Enumerate(const records::Spec& spec, const EnumerationOptions& options,
                                           GraphSink& sink);

}  // namespace taso::generator

#endif  // TASO_GENERATOR_ENUMERATOR_H_
