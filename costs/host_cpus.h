// The CPUs this process may run on, and the thread count a runtime picks for
// itself on them: what `taso optimize` optimizes for unless told --threads.
#ifndef TASO_COSTS_HOST_CPUS_H_
#define TASO_COSTS_HOST_CPUS_H_

#include <string>
#include <vector>

namespace taso::profiler {

// The logical CPUs in this process's affinity mask, ascending ({0} when the
// mask cannot be read).
std::vector<int> AllowedCpus();

// One thread per physical core among AllowedCpus(): what ONNX Runtime's CPU
// provider uses when its intra-op thread count is left at 0. Hyperthread
// siblings count once; where sysfs has no topology, every allowed CPU counts.
int RuntimeDefaultThreads();

// The same from a topology given as text, for tests: `core_of[cpu]` is the
// "package:core" sysfs reports for each allowed cpu ("" when unknown).
int CountPhysicalCores(const std::vector<std::string>& core_of);

}  // namespace taso::profiler

#endif  // TASO_COSTS_HOST_CPUS_H_
