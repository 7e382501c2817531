#include "net/metrics.h"

#include <limits>

#include "gtest/gtest.h"

namespace taso::net {
namespace {

TEST(MetricsTest, CounterWithLabelsRendersHelpTypeAndOneLinePerSeries) {
  MetricsRegistry registry;
  Counter requests = registry.AddCounter("taso_requests_total", "Requests handled", {"method", "code"});
  requests.Increment({"/p.S/M", "OK"});
  requests.Increment({"/p.S/M", "OK"}, 2);
  requests.Increment({"/p.S/M", "INTERNAL"});
  requests.Increment({"/p.S/M", "OK"}, -5);  // ignored: counters only go up
  EXPECT_EQ(registry.Render(),
            "# HELP taso_requests_total Requests handled\n"
            "# TYPE taso_requests_total counter\n"
            "taso_requests_total{method=\"/p.S/M\",code=\"INTERNAL\"} 1\n"
            "taso_requests_total{method=\"/p.S/M\",code=\"OK\"} 3\n");
}

TEST(MetricsTest, GaugeSetAddAndCallback) {
  MetricsRegistry registry;
  Gauge running = registry.AddGauge("taso_running", "Calls running");
  running.Set(4);
  running.Add(-1.5);
  int64_t hits = 7;
  registry.AddCallback("taso_hits_total", "Hits, read at scrape time", MetricType::kCounter,
                       [&hits] { return static_cast<double>(hits); });
  hits = 9;
  EXPECT_EQ(registry.Render(),
            "# HELP taso_running Calls running\n"
            "# TYPE taso_running gauge\n"
            "taso_running 2.5\n"
            "# HELP taso_hits_total Hits, read at scrape time\n"
            "# TYPE taso_hits_total counter\n"
            "taso_hits_total 9\n");
}

TEST(MetricsTest, HistogramBucketsAreCumulativeWithInfSumAndCount) {
  MetricsRegistry registry;
  Histogram latency = registry.AddHistogram("taso_seconds", "Latency", {0.1, 1}, {"method"});
  latency.Observe(0.05, {"m"});
  latency.Observe(0.1, {"m"});  // on the bound: le is inclusive
  latency.Observe(0.5, {"m"});
  latency.Observe(3, {"m"});
  EXPECT_EQ(registry.Render(),
            "# HELP taso_seconds Latency\n"
            "# TYPE taso_seconds histogram\n"
            "taso_seconds_bucket{method=\"m\",le=\"0.1\"} 2\n"
            "taso_seconds_bucket{method=\"m\",le=\"1\"} 3\n"
            "taso_seconds_bucket{method=\"m\",le=\"+Inf\"} 4\n"
            "taso_seconds_sum{method=\"m\"} 3.65\n"
            "taso_seconds_count{method=\"m\"} 4\n");
}

TEST(MetricsTest, LabelValuesAndHelpAreEscaped) {
  MetricsRegistry registry;
  registry.AddGauge("g", "line\\one\ntwo", {"path"}).Set(1, {"a\"b\\c\nd"});
  EXPECT_EQ(registry.Render(),
            "# HELP g line\\\\one\\ntwo\n"
            "# TYPE g gauge\n"
            "g{path=\"a\\\"b\\\\c\\nd\"} 1\n");
}

TEST(MetricsTest, DeclaringTwiceReturnsTheSameMetric) {
  MetricsRegistry registry;
  registry.AddCounter("c", "first").Increment();
  registry.AddCounter("c", "second").Increment();
  EXPECT_EQ(registry.Render(), "# HELP c first\n# TYPE c counter\nc 2\n");
}

TEST(MetricsTest, ValuesFormatAsPrometheusReadsThem) {
  EXPECT_EQ(FormatMetricValue(0), "0");
  EXPECT_EQ(FormatMetricValue(123456789012), "123456789012");
  EXPECT_EQ(FormatMetricValue(0.1), "0.1");
  EXPECT_EQ(FormatMetricValue(-2.5), "-2.5");
  EXPECT_EQ(FormatMetricValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(FormatMetricValue(std::numeric_limits<double>::quiet_NaN()), "NaN");
}

}  // namespace
}  // namespace taso::net
