#include "cli/svg_render.h"

#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "cluster/processes.h"
#include "core/scratch_dir.h"

namespace taso::cli {

absl::StatusOr<std::string> FindGraphviz(const SvgRenderOptions& options) {
  const std::string& program = options.program;
  if (program.find('/') != std::string::npos) {
    if (access(program.c_str(), X_OK) == 0) return program;
  } else if (const char* path = std::getenv("PATH")) {
    for (absl::string_view dir : absl::StrSplit(path, ':', absl::SkipEmpty())) {
      std::string candidate = absl::StrCat(dir, "/", program);
      if (access(candidate.c_str(), X_OK) == 0) return candidate;
    }
  }
  return absl::FailedPreconditionError(absl::StrCat(
      "Graphviz's '", program, "' is not on PATH, and pictures need it: install graphviz (deploy/setup.sh)"));
}

absl::Status RenderSvg(const std::string& dot_text, const std::string& svg_path, const SvgRenderOptions& options) {
  auto program = FindGraphviz(options);
  if (!program.ok()) return program.status();
  auto scratch = ScratchDir::Make("svg");
  if (!scratch.ok()) return scratch.status();
  const std::string input = scratch->File("picture.dot"), log = scratch->File("graphviz.log");
  const std::string partial = svg_path + ".partial";
  {
    std::ofstream out(input, std::ios::binary);
    if (!(out << dot_text)) return absl::PermissionDeniedError(absl::StrCat("cannot write ", input));
  }
  auto pid = cluster::Spawn(*program, {"-Tsvg", "-o", partial, input}, log);
  if (!pid.ok()) return pid.status();
  const auto deadline = std::chrono::steady_clock::now() + absl::ToChronoMilliseconds(options.time_limit);
  std::optional<int> code;
  while (!(code = cluster::PollExit(*pid))) {
    if (std::chrono::steady_clock::now() > deadline) {
      cluster::Stop(*pid, SIGKILL, 1000);
      std::remove(partial.c_str());
      return absl::DeadlineExceededError(absl::StrCat("Graphviz took longer than ", absl::FormatDuration(options.time_limit),
                                                      " on ", svg_path, "; draw fewer nodes"));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (*code != 0) {
    std::remove(partial.c_str());
    return absl::InternalError(absl::StrCat(*program, " exited with ", *code, " drawing ", svg_path, ": ", cluster::TailFile(log, 5)));
  }
  if (std::rename(partial.c_str(), svg_path.c_str()) != 0) {
    std::remove(partial.c_str());
    return absl::PermissionDeniedError(absl::StrCat("cannot write ", svg_path));
  }
  return absl::OkStatus();
}

}  // namespace taso::cli
