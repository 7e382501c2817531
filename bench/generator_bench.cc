// Enumeration throughput of the generator alone (no store): graphs per second
// per core for each size, single-threaded, TASO's default spec unless --spec.
//   bazel run -c opt //bench:generator_bench -- --sizes=2,3
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "generator/enumerator.h"
#include "generator/recheck.h"
#include "records/encoding.h"
#include "records/spec.h"

ABSL_FLAG(std::vector<std::string>, sizes, std::vector<std::string>({"2", "3"}), "graph sizes to time");
ABSL_FLAG(std::string, spec, "", "generation spec file (text proto); default: TASO's");
ABSL_FLAG(bool, recheck, false, "with --count_classes: run the store's re-check on every class");
ABSL_FLAG(double, max_seconds, 0, "stop each size after this long and report the fraction done (0: no limit)");
ABSL_FLAG(bool, dump, false, "print every graph (debugging small specs)");
ABSL_FLAG(bool, count_classes, false, "also count distinct fingerprints in memory (slower)");

namespace {

struct CountingSink : taso::generator::GraphSink {
  bool count_classes = false;
  bool dump = false;
  const taso::records::Spec* spec = nullptr;
  struct H {
    size_t operator()(const taso::Fingerprint& f) const { return f.lo; }
  };
  absl::flat_hash_map<taso::Fingerprint, std::vector<std::string>, H> classes;
  void OnGraph(const taso::Fingerprint& fp, std::string_view encoding, int) override {
    if (count_classes) classes[fp].emplace_back(encoding);
    if (dump) std::printf("%s %s\n", fp.ToHex().c_str(), taso::records::DescribeEncoding(*spec, encoding).c_str());
  }
  double max_seconds = 0;
  double fraction = 0;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  bool OnCheckpoint(int64_t, double done_fraction) override {
    fraction = done_fraction;
    return max_seconds <= 0 ||
           std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < max_seconds;
  }
};

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  taso::records::Spec spec = taso::records::DefaultSpec();
  if (!absl::GetFlag(FLAGS_spec).empty()) {
    auto loaded = taso::records::LoadSpecFile(absl::GetFlag(FLAGS_spec));
    if (!loaded.ok()) {
      std::fprintf(stderr, "error: %s\n", std::string(loaded.status().message()).c_str());
      return 1;
    }
    spec = *loaded;
  }
  std::printf("%-5s %14s %14s %10s %14s\n", "size", "graphs", "evaluations", "seconds", "graphs/s/core");
  for (const std::string& s : absl::GetFlag(FLAGS_sizes)) {
    taso::generator::EnumerationOptions options;
    options.max_ops = std::stoi(s);
    CountingSink sink;
    sink.count_classes = absl::GetFlag(FLAGS_count_classes);
    sink.dump = absl::GetFlag(FLAGS_dump);
    sink.max_seconds = absl::GetFlag(FLAGS_max_seconds);
    sink.spec = &spec;
    auto start = std::chrono::steady_clock::now();
    auto stats = taso::generator::Enumerate(spec, options, sink);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (!stats.ok()) {
      std::fprintf(stderr, "error: %s\n", std::string(stats.status().message()).c_str());
      return 1;
    }
    std::printf("%-5d %14lld %14lld %10.2f %14.0f\n", options.max_ops, (long long)stats->graphs,
                (long long)stats->evaluations, seconds, stats->graphs / seconds);
    if (stats->cancelled) std::printf("      stopped at --max_seconds, %.3f%% of the tree\n", 100 * sink.fraction);
    for (int k = 1; k <= options.max_ops; ++k) {
      std::printf("      size %d: %lld graphs\n", k, (long long)stats->graphs_by_size[k]);
    }
    std::printf("      evaluations reused (an earlier sibling's value): %lld\n",
                (long long)stats->evaluations_reused);
    std::printf("      pruned: %lld equal tensor, %lld operator order\n",
                (long long)stats->pruned_equal_tensor, (long long)stats->pruned_order);
    if (sink.count_classes) {
      long long multi = 0, members = 0, pairs = 0, rejected = 0, canonical_classes = 0;
      taso::generator::Rechecker rechecker(spec);
      auto t0 = std::chrono::steady_clock::now();
      for (auto& [fp, list] : sink.classes) {
        long long n = list.size();
        if (n > 1) {
          ++multi;
          members += n;
          if (absl::GetFlag(FLAGS_recheck)) {
            std::sort(list.begin(), list.end());
            auto check = rechecker.Check(list);
            if (!check.pairs.empty()) ++canonical_classes;
            for (auto& p : check.pairs) {
              ++pairs;
              if (p.rejected) {
                ++rejected;
                if (rejected <= 5) std::printf("      rejected: %s  vs  %s: %s\n",
                    taso::records::DescribeEncoding(spec, list[p.source]).c_str(),
                    taso::records::DescribeEncoding(spec, list[p.target]).c_str(), p.reason.c_str());
              }
            }
          }
        }
      }
      double recheck_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      std::printf("      recheck: %lld classes with a canonical member, %lld pairs, %lld rejected, %.2f s\n",
                  canonical_classes, pairs, rejected, recheck_s);
      std::printf("      distinct fingerprints %zu, classes with >1 graph %lld (%lld graphs)\n",
                  sink.classes.size(), multi, members);
    }
  }
  return 0;
}
