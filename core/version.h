// One version string for every binary's --version.
#ifndef TASO_CORE_VERSION_H_
#define TASO_CORE_VERSION_H_

namespace taso {
inline constexpr char kVersion[] = "0.2.0";
}  // namespace taso

#endif  // TASO_CORE_VERSION_H_
