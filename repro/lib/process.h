// Processes and CPUs a reproducer arranges around its perf event.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>

namespace sigwake {

// Pins the calling thread (and children forked after) to one CPU, so that a
// record, the irq_work it raises and our wait all run on that CPU, in order.
void pin_to_cpu(int cpu);

// A forked child that stops itself at once (SIGSTOP) and, once resumed, runs
// and stops itself again: a task whose context switches we cause at a moment of
// our choosing. It stays alive: once the monitored task exits, perf_poll()
// reports POLLHUP instead of POLLIN, which would hide the wakeup we look for.
class StoppedChild {
 public:
  // Once resumed the child runs `after_resume` (if any) before it stops again.
  // It leads its own process group, so that whatever it forks dies with it.
  explicit StoppedChild(std::function<void()> after_resume = {});  // returns once the child is stopped
  StoppedChild(const StoppedChild&) = delete;
  StoppedChild& operator=(const StoppedChild&) = delete;
  ~StoppedChild();  // kills its process group and reaps it

  pid_t pid() const { return pid_; }
  void resume() const;  // SIGCONT: it switches in, runs, stops again (switching out)

 private:
  pid_t pid_ = -1;
};

// An anonymous private page, mapped for as long as this lives: each one is a
// PERF_RECORD_MMAP for events with mmap_data.
class AnonymousPage {
 public:
  AnonymousPage();
  AnonymousPage(const AnonymousPage&) = delete;
  AnonymousPage& operator=(const AnonymousPage&) = delete;
  ~AnonymousPage();
  std::uint64_t address() const { return reinterpret_cast<std::uintptr_t>(address_); }

 private:
  void* address_;
};

// Forks a child that runs `body`, then stops itself (SIGSTOP) to stay alive;
// for use inside a StoppedChild, whose process group it joins.
pid_t fork_and_stop(const std::function<void()>& body);

// poll() for POLLIN on `fd` until the deadline; returns the revents seen (0 if none).
short wait_readable(int fd, std::chrono::milliseconds budget);

// Spends CPU time in user space for about `budget`, for task-clock events to count.
void burn_cpu(std::chrono::microseconds budget);

}  // namespace sigwake
