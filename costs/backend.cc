// Backend names (see backend.h).
#include "costs/backend.h"

namespace taso::profiler {

const char* BackendName(Backend backend) {
  switch (backend) {
    case BACKEND_CUDA: return "cuda";
    case BACKEND_CPU: return "cpu";
    case BACKEND_ANALYTIC: return "analytic";
    case BACKEND_ORT_CPU: return "ort";
    default: return "auto";
  }
}

std::optional<Backend> BackendFromName(const std::string& name) {
  for (Backend b : {BACKEND_CUDA, BACKEND_CPU, BACKEND_ANALYTIC, BACKEND_ORT_CPU, BACKEND_UNSPECIFIED}) {
    if (name == BackendName(b)) return b;
  }
  return std::nullopt;
}

std::string BackendChoices() { return "auto, cuda, cpu, analytic or ort"; }

}  // namespace taso::profiler
