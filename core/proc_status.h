// A process's memory figures as Linux reports them in /proc/PID/status:
// how much address space it maps (VmSize), holds resident (VmRSS) and has
// held at most (VmHWM).
#ifndef TASO_CORE_PROC_STATUS_H_
#define TASO_CORE_PROC_STATUS_H_

#include <cstdint>

#include "absl/strings/string_view.h"

namespace taso {

// The field ("VmHWM", "VmRSS", "VmSize") of process `pid` (0: this one), in
// KiB; -1 when the process or the field is not there.
int64_t ProcStatusKib(int pid, absl::string_view field);

}  // namespace taso

#endif  // TASO_CORE_PROC_STATUS_H_
