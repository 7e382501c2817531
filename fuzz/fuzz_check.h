// What a fuzz target asserts beyond "no crash": a property the code under
// test promises, checked on every input it accepts. A failure aborts, which
// libFuzzer records as a crash with its input.
#ifndef TASO_FUZZ_FUZZ_CHECK_H_
#define TASO_FUZZ_FUZZ_CHECK_H_

#include <cstdio>
#include <cstdlib>

#define FUZZ_CHECK(condition, what)                                                  \
  do {                                                                               \
    if (!(condition)) {                                                              \
      std::fprintf(stderr, "%s:%d: fuzz check failed: %s\n", __FILE__, __LINE__, what); \
      std::abort();                                                                  \
    }                                                                                \
  } while (0)

#endif  // TASO_FUZZ_FUZZ_CHECK_H_
