// A fresh, empty directory under the test's scratch directory, for tests
// that open a database.
#ifndef TASO_STORAGE_TEST_DIR_H_
#define TASO_STORAGE_TEST_DIR_H_

#include <cstdlib>
#include <filesystem>
#include <string>

namespace taso::storage {

inline std::string FreshTestDir(const std::string& name) {
  const char* base = std::getenv("TEST_TMPDIR");
  std::string dir = std::string(base ? base : "/tmp") + "/" + name;
  std::filesystem::remove_all(dir);
  return dir;
}

}  // namespace taso::storage

#endif  // TASO_STORAGE_TEST_DIR_H_
