#include "profiler/cpu/cache_size.h"

#include <filesystem>
#include <fstream>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"

namespace taso::profiler {
namespace {

std::string ReadTrimmed(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::string text;
  std::getline(in, text);
  return std::string(absl::StripAsciiWhitespace(text));
}

// "32768K", "2M", "1024": bytes, or 0.
int64_t ParseCacheSize(std::string text) {
  int64_t unit = 1;
  if (!text.empty() && (text.back() == 'K' || text.back() == 'M' || text.back() == 'G')) {
    unit = text.back() == 'K' ? 1 << 10 : text.back() == 'M' ? 1 << 20 : 1 << 30;
    text.pop_back();
  }
  int64_t value = 0;
  if (!absl::SimpleAtoi(text, &value) || value <= 0) return 0;
  return value * unit;
}

}  // namespace

int64_t LastLevelCacheBytesIn(const std::string& cache_dir) {
  std::error_code error;
  int best_level = -1;
  int64_t best_bytes = 0;
  for (const auto& entry : std::filesystem::directory_iterator(cache_dir, error)) {
    if (entry.path().filename().string().rfind("index", 0) != 0) continue;
    if (ReadTrimmed(entry.path() / "type") == "Instruction") continue;
    int level = 0;
    if (!absl::SimpleAtoi(ReadTrimmed(entry.path() / "level"), &level)) continue;
    const int64_t bytes = ParseCacheSize(ReadTrimmed(entry.path() / "size"));
    if (bytes > 0 && level > best_level) {
      best_level = level;
      best_bytes = bytes;
    }
  }
  return best_bytes;
}

int64_t LastLevelCacheBytes() {
  static const int64_t bytes = LastLevelCacheBytesIn("/sys/devices/system/cpu/cpu0/cache");
  return bytes;
}

}  // namespace taso::profiler
