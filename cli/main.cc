// `taso`: the one command people type. Subcommands are thin wrappers over the
// libraries; each stage of the pipeline adds its own.
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "cli/ir_command.h"

ABSL_FLAG(uint64_t, seed, 1, "seed of the deterministic input values");
ABSL_FLAG(bool, json, false, "print machine-readable JSON");

namespace {

constexpr char kVersion[] = "taso 0.1.0 (foundation)";

constexpr char kUsage[] =
    "taso <command> [flags]\n"
    "commands:\n"
    "  ir [FILE]   validate a graph (taso.ir.Graph text proto; default: an embedded example) and print\n"
    "              its canonical form, structural hash, fingerprint and float outputs\n"
    "  version     print the version\n";

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(kUsage);
  absl::FlagsUsageConfig usage_config;
  usage_config.version_string = [] { return std::string(kVersion) + "\n"; };
  absl::SetFlagsUsageConfig(usage_config);
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  if (args.size() < 2) {
    std::cerr << kUsage;
    return 2;
  }
  const std::string command = args[1];
  if (command == "version") {
    std::cout << kVersion << "\n";
    return 0;
  }
  if (command == "ir") {
    if (args.size() > 3) {
      std::cerr << "taso ir: expected at most one FILE\n";
      return 2;
    }
    taso::cli::IrCommandOptions options;
    if (args.size() == 3) options.path = args[2];
    options.seed = absl::GetFlag(FLAGS_seed);
    options.json = absl::GetFlag(FLAGS_json);
    absl::Status s = taso::cli::RunIrCommand(options, std::cout);
    if (!s.ok()) {
      std::cerr << "taso ir: " << s.message() << "\n";
      return 1;
    }
    return 0;
  }
  std::cerr << "taso: unknown command '" << command << "'\n" << kUsage;
  return 2;
}
