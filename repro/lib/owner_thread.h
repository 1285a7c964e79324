// A thread named as a signal's owner (F_SETOWN_EX with F_OWNER_TID) that keeps
// the signal blocked while the trigger runs. A signal directed at it waits on it
// alone; a process-directed one goes to a thread that has the signal unblocked
// (the decoy: SignalCapture::Unblocked in the caller). So a kernel that treats
// F_OWNER_TID like F_OWNER_PID shows up as a delivery on the wrong thread.
#pragma once

#include <sys/types.h>

#include <thread>

#include "signal_capture.h"

namespace sigwake {

class OwnerThread {
 public:
  // Starts the thread (it inherits the caller's mask: create it with the signal
  // blocked, as SignalCapture leaves it) and returns once it has told its id.
  explicit OwnerThread(const SignalCapture& capture);
  OwnerThread(const OwnerThread&) = delete;
  OwnerThread& operator=(const OwnerThread&) = delete;
  ~OwnerThread();  // take()s, if not done yet

  pid_t tid() const { return tid_; }

  // The owner takes every signal pending on it (its handler runs there), then ends.
  void take();

 private:
  int wake_fd_;
  std::thread thread_;
  pid_t tid_ = 0;
};

}  // namespace sigwake
