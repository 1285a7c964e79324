#include "owner_thread.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <future>

#include "budgets.h"
#include "errors.h"

namespace sigwake {

OwnerThread::OwnerThread(const SignalCapture& capture) : wake_fd_(eventfd(0, EFD_CLOEXEC)) {
  check(wake_fd_ >= 0, "eventfd");
  std::promise<pid_t> started;
  std::future<pid_t> tid = started.get_future();
  thread_ = std::thread([this, &capture, &started] {
    started.set_value(gettid());
    std::uint64_t told = 0;
    while (read(wake_fd_, &told, sizeof told) < 0 && errno == EINTR) {
    }  // blocked in read with the signal blocked: only take() ends it
    capture.accept_pending();
  });
  if (tid.wait_for(kWakeupBudget) != std::future_status::ready) {
    take();
    throw ReproError("the owner thread did not start within its budget");
  }
  tid_ = tid.get();
}

OwnerThread::~OwnerThread() {
  take();
  close(wake_fd_);
}

void OwnerThread::take() {
  if (!thread_.joinable()) return;
  const std::uint64_t one = 1;
  (void)!write(wake_fd_, &one, sizeof one);  // an eventfd counter far from its limit: cannot fail
  thread_.join();
}

}  // namespace sigwake
