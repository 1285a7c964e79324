#include "waiting_thread.h"

#include <sys/eventfd.h>
#include <unistd.h>


#include "errors.h"

namespace sigwake {

WaitingThread::WaitingThread(const SignalCapture& capture, int n, std::chrono::milliseconds budget)
    : stop_fd_(eventfd(0, EFD_CLOEXEC)) {
  check(stop_fd_ >= 0, "eventfd");
  std::promise<pid_t> started;
  std::future<pid_t> tid = started.get_future();
  std::promise<void> done;
  done_ = done.get_future();
  thread_ = std::thread([this, &capture, n, budget, &started, done = std::move(done)]() mutable {
    started.set_value(gettid());
    capture.wait_for(n, Deadline(budget), stop_fd_);
    done.set_value();
  });
  if (tid.wait_for(budget) != std::future_status::ready) {
    stop();
    throw ReproError("the waiting thread did not start within its budget");
  }
  tid_ = tid.get();
}

WaitingThread::~WaitingThread() {
  stop();
  close(stop_fd_);
}

void WaitingThread::finish(std::chrono::nanoseconds grace) {
  if (!thread_.joinable()) return;
  if (done_.wait_for(grace) != std::future_status::ready) {
    const std::uint64_t one = 1;
    (void)!write(stop_fd_, &one, sizeof one);
  }
  thread_.join();
}

}  // namespace sigwake
