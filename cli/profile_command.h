// `taso profile`: operator costs, from a taso_profiler server (--server) or
// embedded (the profiler library in this process, on the same cache).
//   taso profile measure SIG...        cost of each signature, e.g.
//                                      'conv2d[stride=1x1,pad=same,act=none](f32[1,64,56,56],f32[64,64,3,3])'
//   taso profile graph FILE|resnet50   cost of a graph (taso.ir.Graph text proto, .onnx, or an embedded
//                                      model); --measure also runs it whole and prints the measured time
//                                      (--views copy|alias: views run as copies, as ORT does, or alias)
//   taso profile backends              which backends this machine has
//   taso profile cache list|export|invalidate [SIG...] [--all] [--device D] [--backend B]
#ifndef TASO_CLI_PROFILE_COMMAND_H_
#define TASO_CLI_PROFILE_COMMAND_H_

#include <ostream>
#include <string>
#include <vector>

#include "profiler/ort/ort_backend.h"

namespace taso::cli {

struct ProfileOptions {
  std::string subcommand;         // measure | graph | backends | cache
  std::vector<std::string> args;
  std::string server;             // taso_profiler address; empty: embedded
  std::string cache_dir;          // embedded: "" default directory, "none" memory only
  std::string backend = "auto";   // auto | cuda | cpu | analytic
  std::string analytic_device = "cpu";
  // The threads the model will run with (--threads), asked of the profiler
  // in every request (0: its own count); the embedded cpu backend's own.
  int threads = 0;
  int cpu_threads = 0;
  std::string calibration;        // embedded cpu backend calibration ("" compiled in, "none", FILE)
  profiler::OrtBackendOptions ort;  // embedded ort backend (--backend ort)
  bool bypass_cache = false;
  int repetitions = 0;            // minimum timed runs (0: the profiler's default)
  std::string device;             // cache list/export/invalidate: only this device
  std::vector<std::string> ops;   // cache list/export: only these operators
  bool all = false;               // cache invalidate: every matching entry
  std::string format = "json";    // cache export: json (one entry per line) | proto
  std::string output;             // cache export: file (default stdout; proto needs a file)
  bool measure = false;           // graph: also run the whole graph end to end (MeasureGraph)
  std::string views = "copy";     // graph --measure: copy | alias (MeasureGraphRequest.views)
  bool json = false;
};

// Exit codes: 0 ok; 1 error; 2 bad options; 3 server unreachable or cache
// busy; 4 some signatures could not be measured (the others are printed).
int RunProfile(const ProfileOptions& options, std::ostream& out, std::ostream& err);

}  // namespace taso::cli

#endif  // TASO_CLI_PROFILE_COMMAND_H_
