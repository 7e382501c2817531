// egraph-serialize JSON (`taso egraph extract`, optimizer/eqsat/egraph_json.h):
// any bytes parse or get a clear error; an e-graph that parses extracts with
// greedy and DAG greedy (DAG greedy never dearer, both choices acyclic with
// finite tree cost) and writes back to JSON that parses to the same size.
#include <cmath>
#include <cstdint>
#include <string_view>

#include "fuzz/fuzz_check.h"
#include "optimizer/eqsat/egraph_json.h"
#include "optimizer/eqsat/extract.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace taso::optimizer;
  EGraphJsonLimits limits;
  limits.max_nodes = 2000;  // keep each input fast
  auto g = ParseEGraphJson(std::string_view(reinterpret_cast<const char*>(data), size), limits);
  if (!g.ok()) return 0;
  const ExtractionProblem& p = g->problem;
  auto greedy = SolveGreedy(p);
  auto dag = SolveGreedyDag(p);
  FUZZ_CHECK(greedy.ok() == dag.ok(), "DAG greedy finds a choice exactly when greedy does");
  if (greedy.ok()) {
    FUZZ_CHECK(dag->cost_ms <= greedy->cost_ms + 1e-9 * (1 + greedy->cost_ms), "DAG greedy dearer than greedy");
    FUZZ_CHECK(std::isfinite(TreeCost(p, greedy->pick, &g->child_uses)), "greedy's choice has no tree cost");
    FUZZ_CHECK(std::isfinite(TreeCost(p, dag->pick, &g->child_uses)), "DAG greedy's choice has no tree cost");
  }
  auto text = EGraphJson(p);
  if (text.ok()) {
    auto again = ParseEGraphJson(*text, limits);
    FUZZ_CHECK(again.ok(), "written e-graph does not parse");
    FUZZ_CHECK(again->problem.node_id.size() <= p.node_id.size(), "written e-graph grew");
  }
  return 0;
}
