// Threads an owner starts to finish work in the background (a store's job
// finalizers and finishers) and joins together: when a caller must wait for
// them, and before the owner's other members go away.
#ifndef TASO_CORE_BACKGROUND_THREADS_H_
#define TASO_CORE_BACKGROUND_THREADS_H_

#include <functional>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace taso {

class BackgroundThreads {
 public:
  BackgroundThreads() = default;
  BackgroundThreads(const BackgroundThreads&) = delete;
  BackgroundThreads& operator=(const BackgroundThreads&) = delete;
  // An owner whose threads use its other members joins before they go:
  // it calls JoinAll in its own destructor.
  ~BackgroundThreads() { JoinAll(); }

  void Start(std::function<void()> run) {
    std::lock_guard<std::mutex> lock(mu_);
    threads_.emplace_back(std::move(run));
  }

  // Joins every thread started before the call (one started meanwhile waits
  // for the next call).
  void JoinAll() {
    std::vector<std::thread> threads;
    {
      std::lock_guard<std::mutex> lock(mu_);
      threads.swap(threads_);
    }
    for (std::thread& t : threads) t.join();
  }

 private:
  std::mutex mu_;
  std::vector<std::thread> threads_;
};

}  // namespace taso

#endif  // TASO_CORE_BACKGROUND_THREADS_H_
