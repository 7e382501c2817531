// Per-command flags for a tool with subcommands (`taso optimize --help`).
// The flags themselves stay absl flags (one definition, one default, one
// help text); a command names the ones it takes, and this parser refuses the
// rest, so `taso optimize --instances 5` is an error rather than a flag of
// another command set silently. Values are parsed by absl, names accept
// dashes or underscores, and every refusal is one line and exit code 2.
#ifndef TASO_APP_COMMAND_FLAGS_H_
#define TASO_APP_COMMAND_FLAGS_H_

#include <set>
#include <string>
#include <vector>

namespace taso::app {

struct ShortFlag {
  char letter;       // -o
  std::string flag;  // the absl flag it sets: "o"
};

struct CommandFlags {
  std::string command;    // "taso optimize": in messages and the usage line
  std::string arguments;  // "IN.onnx -o OUT.onnx": what follows the command
  std::string summary;    // one paragraph: what the command does
  std::vector<std::string> flags;  // the absl flag names (underscores) it takes
  std::vector<ShortFlag> short_flags;
};

enum class ParseOutcome {
  kRun,    // flags set; run the command
  kHelp,   // -h or --help: print CommandHelp and exit 0
  kError,  // `error` says what is wrong: print it and the usage line, exit 2
};

struct ParsedCommand {
  ParseOutcome outcome = ParseOutcome::kRun;
  std::vector<std::string> positional;
  std::set<std::string> given;  // flags set on the command line (absl names)
  std::string error;
};

// Parses `args` (what follows the command and subcommand words) against
// `command`: sets each given flag through absl, collects the positional
// arguments. `--` ends the flags.
ParsedCommand ParseCommandFlags(const CommandFlags& command, const std::vector<std::string>& args);

// "usage: taso optimize IN.onnx -o OUT.onnx [flags]".
std::string UsageLine(const CommandFlags& command);

// The usage line, the summary and every flag the command takes, with its
// type, its default and its help text: what --help prints.
std::string CommandHelp(const CommandFlags& command);

// "--time-limit": how a flag is spelled for users.
std::string DashedName(const std::string& flag);

}  // namespace taso::app

#endif  // TASO_APP_COMMAND_FLAGS_H_
