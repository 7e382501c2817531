#include "net/metrics.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <utility>

#include "absl/strings/str_cat.h"

namespace taso::net {
namespace {

const char* TypeName(MetricType type) {
  switch (type) {
    case MetricType::kCounter:
      return "counter";
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kHistogram:
      return "histogram";
  }
  return "untyped";
}

// Label values escape backslash, double quote and newline; HELP text
// escapes backslash and newline (the exposition format's rules).
std::string Escape(const std::string& text, bool quote) {
  std::string out;
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '"' && quote) {
      out += "\\\"";
    } else {
      out += c;
    }
  }
  return out;
}

// {a="x",b="y"} plus an optional extra label (a histogram's le); "" when empty.
std::string LabelText(const std::vector<std::string>& names, const std::vector<std::string>& values,
                      const std::string& extra_name = "", const std::string& extra_value = "") {
  std::vector<std::string> parts;
  for (size_t i = 0; i < names.size(); ++i) {
    parts.push_back(absl::StrCat(names[i], "=\"", Escape(values[i], true), "\""));
  }
  if (!extra_name.empty()) parts.push_back(absl::StrCat(extra_name, "=\"", extra_value, "\""));
  if (parts.empty()) return "";
  std::string out = "{";
  for (size_t i = 0; i < parts.size(); ++i) absl::StrAppend(&out, i ? "," : "", parts[i]);
  return out + "}";
}

}  // namespace

std::string FormatMetricValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  if (value == std::floor(value) && std::fabs(value) < 1e15) {
    return absl::StrCat(static_cast<int64_t>(value));
  }
  // The shortest form that reads back as the same double (17 digits always do).
  char text[32];
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(text, sizeof(text), "%.*g", digits, value);
    if (std::strtod(text, nullptr) == value) break;
  }
  return text;
}

std::vector<double> LatencyBuckets() {
  return {0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300};
}

void Counter::Increment(const std::vector<std::string>& labels, double by) const {
  if (registry_ == nullptr || by < 0) return;  // counters only go up
  absl::MutexLock lock(&registry_->mu_);
  registry_->SeriesOf(*registry_->families_[family_], labels).value += by;
}

void Gauge::Set(double value, const std::vector<std::string>& labels) const {
  if (registry_ == nullptr) return;
  absl::MutexLock lock(&registry_->mu_);
  registry_->SeriesOf(*registry_->families_[family_], labels).value = value;
}

void Gauge::Add(double delta, const std::vector<std::string>& labels) const {
  if (registry_ == nullptr) return;
  absl::MutexLock lock(&registry_->mu_);
  registry_->SeriesOf(*registry_->families_[family_], labels).value += delta;
}

void Histogram::Observe(double value, const std::vector<std::string>& labels) const {
  if (registry_ == nullptr) return;
  absl::MutexLock lock(&registry_->mu_);
  MetricsRegistry::Family& family = *registry_->families_[family_];
  MetricsRegistry::Series& series = registry_->SeriesOf(family, labels);
  size_t bucket = 0;
  while (bucket < family.bounds.size() && value > family.bounds[bucket]) ++bucket;
  ++series.buckets[bucket];
  series.value += value;
  ++series.count;
}

int MetricsRegistry::Declare(const std::string& name, const std::string& help, MetricType type,
                             const std::vector<std::string>& label_names, std::vector<double> bounds,
                             std::function<double()> read) {
  absl::MutexLock lock(&mu_);
  for (size_t i = 0; i < families_.size(); ++i) {
    if (families_[i]->name == name) return static_cast<int>(i);
  }
  auto family = std::make_unique<Family>();
  family->name = name;
  family->help = help;
  family->type = type;
  family->label_names = label_names;
  family->bounds = std::move(bounds);
  family->read = std::move(read);
  families_.push_back(std::move(family));
  return static_cast<int>(families_.size() - 1);
}

MetricsRegistry::Series& MetricsRegistry::SeriesOf(Family& family, const std::vector<std::string>& labels) {
  std::vector<std::string> key = labels;
  key.resize(family.label_names.size());
  Series& series = family.series[key];
  if (family.type == MetricType::kHistogram && series.buckets.empty()) {
    series.buckets.assign(family.bounds.size() + 1, 0);
  }
  return series;
}

Counter MetricsRegistry::AddCounter(const std::string& name, const std::string& help,
                                    const std::vector<std::string>& label_names) {
  Counter c;
  c.registry_ = this;
  c.family_ = Declare(name, help, MetricType::kCounter, label_names, {}, nullptr);
  return c;
}

Gauge MetricsRegistry::AddGauge(const std::string& name, const std::string& help,
                                const std::vector<std::string>& label_names) {
  Gauge g;
  g.registry_ = this;
  g.family_ = Declare(name, help, MetricType::kGauge, label_names, {}, nullptr);
  return g;
}

void MetricsRegistry::AddCallback(const std::string& name, const std::string& help, MetricType type,
                                  std::function<double()> read) {
  Declare(name, help, type == MetricType::kHistogram ? MetricType::kGauge : type, {}, {}, std::move(read));
}

Histogram MetricsRegistry::AddHistogram(const std::string& name, const std::string& help,
                                        std::vector<double> bounds, const std::vector<std::string>& label_names) {
  Histogram h;
  h.registry_ = this;
  h.family_ = Declare(name, help, MetricType::kHistogram, label_names, std::move(bounds), nullptr);
  return h;
}

std::string MetricsRegistry::Render() const {
  // Callbacks run outside the lock; their families are never removed.
  std::vector<std::pair<const Family*, std::function<double()>>> callbacks;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& family : families_) {
      if (family->read) callbacks.push_back({family.get(), family->read});
    }
  }
  std::map<const Family*, double> read_values;
  for (auto& [family, read] : callbacks) read_values[family] = read();

  absl::MutexLock lock(&mu_);
  std::string out;
  for (const auto& family : families_) {
    absl::StrAppend(&out, "# HELP ", family->name, " ", Escape(family->help, false), "\n");
    absl::StrAppend(&out, "# TYPE ", family->name, " ", TypeName(family->type), "\n");
    if (family->read) {
      absl::StrAppend(&out, family->name, " ", FormatMetricValue(read_values[family.get()]), "\n");
      continue;
    }
    for (const auto& [labels, series] : family->series) {
      if (family->type != MetricType::kHistogram) {
        absl::StrAppend(&out, family->name, LabelText(family->label_names, labels), " ",
                        FormatMetricValue(series.value), "\n");
        continue;
      }
      uint64_t cumulative = 0;
      for (size_t b = 0; b < series.buckets.size(); ++b) {
        cumulative += series.buckets[b];
        std::string le = b < family->bounds.size() ? FormatMetricValue(family->bounds[b]) : "+Inf";
        absl::StrAppend(&out, family->name, "_bucket", LabelText(family->label_names, labels, "le", le), " ",
                        cumulative, "\n");
      }
      absl::StrAppend(&out, family->name, "_sum", LabelText(family->label_names, labels), " ",
                      FormatMetricValue(series.value), "\n");
      absl::StrAppend(&out, family->name, "_count", LabelText(family->label_names, labels), " ", series.count,
                      "\n");
    }
  }
  return out;
}

}  // namespace taso::net
