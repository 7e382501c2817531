// Runs body(i) for every i in [0, n) on up to `threads` threads, each taking
// the next index as it finishes one: the loops of independent items (a
// chunk of classes to check, a job's pairs to derive) that take seconds.
#ifndef TASO_CORE_PARALLEL_FOR_H_
#define TASO_CORE_PARALLEL_FOR_H_

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace taso {

// One thread per hardware thread (at least one): the count for loops that
// should use the whole machine.
inline int HardwareThreads() { return static_cast<int>(std::max(1u, std::thread::hardware_concurrency())); }

// `body(thread, i)`: `thread` in [0, threads) names the calling thread, for
// per-thread state (a write batch, counters). Threads beyond n are not
// started; with threads <= 1 the loop runs on the caller.
template <typename Body>
void ParallelFor(size_t n, int threads, Body body) {
  const int used = static_cast<int>(std::min<size_t>(std::max(1, threads), std::max<size_t>(1, n)));
  if (used == 1) {
    for (size_t i = 0; i < n; ++i) body(0, i);
    return;
  }
  std::atomic<size_t> next{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < used; ++t) {
    pool.emplace_back([&, t] {
      for (size_t i = next++; i < n; i = next++) body(t, i);
    });
  }
  for (auto& thread : pool) thread.join();
}

}  // namespace taso

#endif  // TASO_CORE_PARALLEL_FOR_H_
