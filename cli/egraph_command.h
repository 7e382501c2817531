// `taso egraph extract FILE.json...`: the extractors (greedy, DAG greedy,
// DAG greedy with sharing moves, ILP) on e-graphs in egraph-serialize JSON, ours (`taso optimize
// --dump-egraph`) or anyone's, with each result's tree and DAG cost, time,
// and what the ILP proved.
#ifndef TASO_CLI_EGRAPH_COMMAND_H_
#define TASO_CLI_EGRAPH_COMMAND_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "optimizer/eqsat/extract.h"

namespace taso::cli {

struct EGraphCommandOptions {
  std::string subcommand;          // "extract"
  std::vector<std::string> files;  // e-graph JSON files
  // Comma-separated, run in this order: greedy, greedy-dag, sharing, ilp; "all" is all four.
  std::string extractors = "all";
  double time_limit_s = 60;  // the ILP's, per file (pruning and building the model included)
  int64_t max_nodes = 20'000'000;
  int64_t ilp_memory_mb = optimizer::IlpSettings().child_memory_mb;  // the ILP's child process's memory cap
  bool json = false;  // one JSON line per file
};

// Exit codes: 0 every file extracted; 1 some file has no acyclic choice or
// the ILP failed; 2 bad options or a file that is not such an e-graph.
int RunEGraph(const EGraphCommandOptions& options, std::ostream& out, std::ostream& err);

}  // namespace taso::cli

#endif  // TASO_CLI_EGRAPH_COMMAND_H_
