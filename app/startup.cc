#include "app/startup.h"

#include <signal.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <iostream>

#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "app/command_flags.h"
#include "core/json_text.h"
#include "core/version.h"

namespace taso::app {
namespace {

// The flags this binary defines (not absl's own; --version and --helpfull
// are answered before these are checked).
std::vector<std::string> OwnFlagNames() {
  std::vector<std::string> names;
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (!absl::StrContains(flag->Filename(), "absl/")) names.emplace_back(name);
  }
  return names;
}

}  // namespace

std::string VersionLine(const std::string& name) { return absl::StrCat(name, " ", kVersion); }

std::vector<char*> ParseCommandLine(const CommandLine& command_line, int argc, char** argv) {
  absl::SetProgramUsageMessage(command_line.usage);
  absl::FlagsUsageConfig usage_config;
  const std::string version = VersionLine(command_line.name) + "\n";
  usage_config.version_string = [version] { return version; };
  absl::SetFlagsUsageConfig(usage_config);
  std::vector<char*> args(argv, argv + argc);
  // --help on stdout with exit 0 and a refused flag with exit 2, as every
  // binary promises (absl exits 1 for both): the flags are checked here
  // first, then absl parses them again.
  const CommandFlags own = {command_line.name, "", command_line.usage, OwnFlagNames(), {}};
  std::vector<std::string> given(args.begin() + 1, args.end());
  for (const std::string& arg : given) {
    if (arg == "--") break;
    if (arg == "--version" || arg == "-version") {
      std::cout << version;
      std::exit(0);
    }
    if (arg == "--helpfull" || arg == "--helpshort") {
      std::cout << CommandHelp(own);
      std::exit(0);
    }
  }
  const ParsedCommand checked = ParseCommandFlags(own, given);
  if (checked.outcome == ParseOutcome::kHelp) {
    std::cout << CommandHelp(own);
    std::exit(0);
  }
  if (checked.outcome == ParseOutcome::kError) {
    std::cerr << command_line.name << ": error: " << checked.error << " (try --help)\n";
    std::exit(2);
  }
  return absl::ParseCommandLine(static_cast<int>(args.size()), args.data());
}

bool TooManyArguments(const std::vector<char*>& args, size_t allowed) {
  if (args.size() <= allowed + 1) return false;
  std::cerr << "error: unexpected argument '" << args[allowed + 1] << "' (try --help)\n";
  return true;
}

int Error(absl::string_view message, int exit_code) {
  std::cerr << "error: " << message << "\n";
  return exit_code;
}

std::string ErrorJson(absl::StatusCode code, absl::string_view message, int exit_code) {
  Json error = Json::object();
  error["code"] = absl::StatusCodeToString(code);
  error["message"] = std::string(message);
  error["exit_code"] = exit_code;
  Json document = Json::object();
  document["error"] = std::move(error);
  return JsonLine(document);
}

int WorkerExitCode(const std::string& name, const absl::Status& status) {
  if (status.ok()) return 0;
  std::cerr << name << ": error: " << status.message() << "\n";
  return status.code() == absl::StatusCode::kUnavailable ? 3 : 1;
}

std::function<void(const std::string&)> StderrLog(const std::string& name) {
  return [name](const std::string& line) { std::fprintf(stderr, "%s: %s\n", name.c_str(), line.c_str()); };
}

namespace {
std::atomic<bool> interrupted{false};
void OnInterrupt(int) { interrupted = true; }
}  // namespace

void CatchInterrupts() {
  struct sigaction action = {};
  action.sa_handler = OnInterrupt;
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

bool Interrupted() { return interrupted; }

}  // namespace taso::app
