// A second thread that takes a signal: it waits on a SignalCapture with the
// signal unblocked (only there), so a thread-directed signal has a home that is
// not the thread causing it.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <future>
#include <thread>

#include "signal_capture.h"

namespace sigwake {

class WaitingThread {
 public:
  // Starts the thread, which waits for `n` deliveries for at most `budget`;
  // returns once the thread has told its id. Create it with the signal blocked
  // in the calling thread (SignalCapture does that), so the new one inherits it.
  WaitingThread(const SignalCapture& capture, int n, std::chrono::milliseconds budget);
  WaitingThread(const WaitingThread&) = delete;
  WaitingThread& operator=(const WaitingThread&) = delete;
  ~WaitingThread();

  pid_t tid() const { return tid_; }
  // Gives its wait up to `grace` more to end by itself, then ends it and joins.
  void finish(std::chrono::nanoseconds grace);
  void stop() { finish(std::chrono::nanoseconds(0)); }  // ends its wait now and joins it

 private:
  int stop_fd_;
  std::future<void> done_;
  std::thread thread_;
  pid_t tid_ = 0;
};

}  // namespace sigwake
