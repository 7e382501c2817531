// The machine's last-level cache, which the graph cost model's weight term
// (GraphCostModel.weight_cache_bytes) measures weights against.
#ifndef TASO_PROFILER_CPU_CACHE_SIZE_H_
#define TASO_PROFILER_CPU_CACHE_SIZE_H_

#include <cstdint>
#include <string>

namespace taso::profiler {

// The largest data or unified cache of cpu0 in bytes, from
// /sys/devices/system/cpu/cpu0/cache/index*/{level,type,size}; 0 when sysfs
// does not say (containers without it, other systems): the term is then off.
int64_t LastLevelCacheBytes();
// The same from a sysfs-like directory (tests).
int64_t LastLevelCacheBytesIn(const std::string& cache_dir);

}  // namespace taso::profiler

#endif  // TASO_PROFILER_CPU_CACHE_SIZE_H_
