// A small thread-safe metrics registry rendered in the Prometheus text
// exposition format (version 0.0.4): counters, gauges (set, or read by a
// callback at scrape time) and histograms with fixed buckets. A metric has
// a fixed list of label names declared once; each distinct list of label
// values is one series. docs/cluster.md lists the metrics.
#ifndef TASO_NET_METRICS_H_
#define TASO_NET_METRICS_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"

namespace taso::net {

enum class MetricType { kCounter, kGauge, kHistogram };

class MetricsRegistry;

// Handles returned by the registry; cheap to copy, valid while the registry lives.
// Label values are given in the order the label names were declared.
class Counter {
 public:
  void Increment(const std::vector<std::string>& labels = {}, double by = 1) const;

 private:
  friend class MetricsRegistry;
  MetricsRegistry* registry_ = nullptr;
  int family_ = -1;
};

class Gauge {
 public:
  void Set(double value, const std::vector<std::string>& labels = {}) const;
  void Add(double delta, const std::vector<std::string>& labels = {}) const;

 private:
  friend class MetricsRegistry;
  MetricsRegistry* registry_ = nullptr;
  int family_ = -1;
};

class Histogram {
 public:
  void Observe(double value, const std::vector<std::string>& labels = {}) const;

 private:
  friend class MetricsRegistry;
  MetricsRegistry* registry_ = nullptr;
  int family_ = -1;
};

// Upper bounds in seconds for request and search latencies: 1 ms to 5 min.
std::vector<double> LatencyBuckets();

class MetricsRegistry {
 public:
  MetricsRegistry() = default;
  MetricsRegistry(const MetricsRegistry&) = delete;
  MetricsRegistry& operator=(const MetricsRegistry&) = delete;

  // Declaring a name twice returns the first declaration (same type expected).
  Counter AddCounter(const std::string& name, const std::string& help,
                     const std::vector<std::string>& label_names = {});
  Gauge AddGauge(const std::string& name, const std::string& help,
                 const std::vector<std::string>& label_names = {});
  // `read` is called at every scrape, outside the registry's lock (it may take
  // the observed object's own lock). For counts kept elsewhere, e.g. a service's
  // counters(); `type` says whether the value is monotone (kCounter) or not.
  void AddCallback(const std::string& name, const std::string& help, MetricType type,
                   std::function<double()> read);
  // `bounds` ascending; a +Inf bucket is implied.
  Histogram AddHistogram(const std::string& name, const std::string& help, std::vector<double> bounds,
                         const std::vector<std::string>& label_names = {});

  // The whole registry in the text exposition format, metrics in the order
  // they were declared, series sorted by label values.
  std::string Render() const;

 private:
  friend class Counter;
  friend class Gauge;
  friend class Histogram;
  struct Series {
    double value = 0;                // counter, gauge; histogram sum
    std::vector<uint64_t> buckets;   // histogram: per-bucket (not cumulative) counts, last is +Inf
    uint64_t count = 0;              // histogram
  };
  struct Family {
    std::string name;
    std::string help;
    MetricType type;
    std::vector<std::string> label_names;
    std::vector<double> bounds;
    std::function<double()> read;
    std::map<std::vector<std::string>, Series> series;
  };
  int Declare(const std::string& name, const std::string& help, MetricType type,
              const std::vector<std::string>& label_names, std::vector<double> bounds,
              std::function<double()> read);
  // The series of `labels` (padded or cut to the declared names), created on first use.
  Series& SeriesOf(Family& family, const std::vector<std::string>& labels) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  std::vector<std::unique_ptr<Family>> families_ ABSL_GUARDED_BY(mu_);
};

// A sample value as Prometheus reads it: integers without a decimal point,
// others with enough digits to round-trip, "+Inf"/"-Inf"/"NaN".
std::string FormatMetricValue(double value);

}  // namespace taso::net

#endif  // TASO_NET_METRICS_H_
