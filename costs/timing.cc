#include "costs/timing.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace taso::profiler {

Measurement Summarize(std::vector<double> samples_ms) {
  Measurement m;
  if (samples_ms.empty()) return m;
  std::sort(samples_ms.begin(), samples_ms.end());
  const size_t n = samples_ms.size();
  m.repetitions = static_cast<int>(n);
  m.min_ms = samples_ms.front();
  m.median_ms = n % 2 == 1 ? samples_ms[n / 2] : (samples_ms[n / 2 - 1] + samples_ms[n / 2]) / 2;
  m.mean_ms = std::accumulate(samples_ms.begin(), samples_ms.end(), 0.0) / n;
  double var = 0;
  for (double s : samples_ms) var += (s - m.mean_ms) * (s - m.mean_ms);
  m.stddev_ms = n > 1 ? std::sqrt(var / (n - 1)) : 0;
  return m;
}

bool EnoughRepetitions(const TimingOptions& options, int done, double elapsed_ms) {
  if (done < options.repetitions) return false;
  if (done >= options.max_repetitions) return true;
  return elapsed_ms >= options.min_timed_ms;
}

int GraphTimingPasses(int graphs) { return graphs > 1 ? 4 : 1; }

std::vector<int> GraphTimingOrder(int n, int pass) {
  std::vector<int> order;
  for (int k = 0; k < n; ++k) order.push_back(pass % 2 == 0 ? k : n - 1 - k);
  return order;
}

void SummarizeGraphTimings(const std::vector<std::vector<std::vector<double>>>& samples,
                           std::vector<absl::StatusOr<GraphTiming>>& results) {
  for (size_t i = 0; i < results.size() && i < samples.size(); ++i) {
    if (!results[i].ok()) continue;
    std::vector<double> all;
    results[i]->pass_median_ms.clear();
    for (const std::vector<double>& pass : samples[i]) {
      if (pass.empty()) continue;
      all.insert(all.end(), pass.begin(), pass.end());
      results[i]->pass_median_ms.push_back(Summarize(pass).median_ms);
    }
    const Measurement m = Summarize(std::move(all));
    results[i]->median_ms = m.median_ms;
    results[i]->min_ms = m.min_ms;
    results[i]->runs = m.repetitions;
  }
}

}  // namespace taso::profiler
