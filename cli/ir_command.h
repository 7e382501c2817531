// `taso ir [FILE]`: load (or build the embedded example) graph, validate it,
// and print its canonical form, structural hash, fingerprint and float result.
#ifndef TASO_CLI_IR_COMMAND_H_
#define TASO_CLI_IR_COMMAND_H_

#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "core/graph.h"

namespace taso::cli {

// A ResNet-style block and a matmul branch, with two outputs.
Graph ExampleGraph();

struct IrCommandOptions {
  std::string path;  // a taso.ir.Graph text proto; empty: the example
  uint64_t seed = 1;
  bool json = false;
};

absl::Status RunIrCommand(const IrCommandOptions& options, std::ostream& out);

}  // namespace taso::cli

#endif  // TASO_CLI_IR_COMMAND_H_
