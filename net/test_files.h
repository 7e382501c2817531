// Files for the net tests: a path under the test's scratch directory, and
// a file's text.
#ifndef TASO_NET_TEST_FILES_H_
#define TASO_NET_TEST_FILES_H_

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace taso::net {

inline std::string TestPath(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  return std::string(tmp != nullptr ? tmp : "/tmp") + "/" + name;
}

inline std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace taso::net

#endif  // TASO_NET_TEST_FILES_H_
