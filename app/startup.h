// Start-up and exit of a taso binary: every main.cc parses its command line
// and reports its outcome the same way, so they read alike and --help,
// --version and the exit codes agree across the binaries.
#ifndef TASO_APP_STARTUP_H_
#define TASO_APP_STARTUP_H_

#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace taso::app {

struct CommandLine {
  std::string name;   // "taso_generator": in --version and messages
  std::string usage;  // --help's first lines
};

// "NAME VERSION", what --version prints.
std::string VersionLine(const std::string& name);

// Sets the usage text and --version, parses the flags and returns the
// positional arguments, the program itself first. --help and --version
// exit 0 after printing; a bad flag exits 2 naming it.
std::vector<char*> ParseCommandLine(const CommandLine& command_line, int argc, char** argv);

// True, after printing "error: unexpected argument 'A' (try --help)", when
// `args` holds more than `allowed` positional arguments after the program.
bool TooManyArguments(const std::vector<char*>& args, size_t allowed = 0);

// Prints "error: MESSAGE" and returns `exit_code`: `return Error(...)` in main.
int Error(absl::string_view message, int exit_code);

// {"error": {"code": "INVALID_ARGUMENT", "message": MESSAGE, "exit_code": N}}
// on one line: what a command given --json prints on stdout when it fails,
// so a script reads one JSON document either way.
std::string ErrorJson(absl::StatusCode code, absl::string_view message, int exit_code);

// How a worker binary ends: 0 when `status` is ok; otherwise prints
// "NAME: error: MESSAGE" and returns 3 when a peer stayed unreachable
// (Unavailable) and 1 for any other error.
int WorkerExitCode(const std::string& name, const absl::Status& status);

// Writes "NAME: LINE" to stderr: a worker's log when it is not --quiet.
std::function<void(const std::string&)> StderrLog(const std::string& name);

// From now on SIGINT and SIGTERM only set a flag that Interrupted() reads, so
// a command can stop the processes it started, or a worker finish the work in
// hand, before it exits.
void CatchInterrupts();
bool Interrupted();

}  // namespace taso::app

#endif  // TASO_APP_STARTUP_H_
