#include "app/startup.h"

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <iostream>

#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/str_cat.h"
#include "core/version.h"

namespace taso::app {
namespace {

// The arguments with '-' in flag names turned into '_'. Kept for the life
// of the process, as argv is: the parsed arguments point into it.
std::vector<char*> WithUnderscoredFlagNames(int argc, char** argv) {
  static std::vector<std::string>* storage = new std::vector<std::string>(argv, argv + argc);
  for (std::string& a : *storage) {
    if (a.rfind("--", 0) != 0) continue;
    const size_t end = std::min(a.find('='), a.size());
    for (size_t i = 2; i < end; ++i) {
      if (a[i] == '-') a[i] = '_';
    }
  }
  std::vector<char*> result;
  for (std::string& a : *storage) result.push_back(a.data());
  return result;
}

}  // namespace

std::string VersionLine(const std::string& name) { return absl::StrCat(name, " ", kVersion); }

std::vector<char*> ParseCommandLine(const CommandLine& command_line, int argc, char** argv) {
  absl::SetProgramUsageMessage(command_line.usage);
  absl::FlagsUsageConfig usage_config;
  const std::string version = VersionLine(command_line.name) + "\n";
  usage_config.version_string = [version] { return version; };
  absl::SetFlagsUsageConfig(usage_config);
  if (!command_line.dashes_in_flag_names) return absl::ParseCommandLine(argc, argv);
  std::vector<char*> normalized = WithUnderscoredFlagNames(argc, argv);
  return absl::ParseCommandLine(argc, normalized.data());
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
