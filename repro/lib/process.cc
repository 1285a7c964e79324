#include "process.h"

#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "deadline.h"
#include "errors.h"

namespace sigwake {

void pin_to_cpu(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  check(sched_setaffinity(0, sizeof set, &set) == 0, "sched_setaffinity");
}

StoppedChild::StoppedChild(std::function<void()> after_resume) {
  pid_ = fork();
  check(pid_ >= 0, "fork");
  if (pid_ == 0) {
    setpgid(0, 0);
    raise(SIGSTOP);
    if (after_resume) after_resume();
    raise(SIGSTOP);
    _exit(0);
  }
  int status = 0;
  pid_t got;
  do {
    got = waitpid(pid_, &status, WUNTRACED);
  } while (got < 0 && errno == EINTR);
  check(got == pid_, "waitpid(WUNTRACED)");
  if (!WIFSTOPPED(status)) throw ReproError("the child did not stop itself");
}

StoppedChild::~StoppedChild() {
  if (pid_ <= 0) return;
  kill(-pid_, SIGKILL);
  kill(pid_, SIGKILL);
  while (waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
}

pid_t fork_and_stop(const std::function<void()>& body) {
  const pid_t pid = fork();
  if (pid == 0) {
    body();
    raise(SIGSTOP);
    _exit(0);
  }
  return pid;
}

void StoppedChild::resume() const { check(kill(pid_, SIGCONT) == 0, "kill(SIGCONT)"); }

AnonymousPage::AnonymousPage()
    : address_(mmap(nullptr, static_cast<std::size_t>(sysconf(_SC_PAGESIZE)), PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)) {
  check(address_ != MAP_FAILED, "mmap(MAP_ANONYMOUS)");
}

AnonymousPage::~AnonymousPage() { munmap(address_, static_cast<std::size_t>(sysconf(_SC_PAGESIZE))); }

short wait_readable(int fd, std::chrono::milliseconds budget) {
  const Deadline deadline(budget);
  pollfd pfd{fd, POLLIN, 0};
  for (;;) {  // polls at least once, so a zero budget asks for the current state
    const timespec left = deadline.remaining_timespec();
    const int rc = ppoll(&pfd, 1, &left, nullptr);
    if (rc > 0) return pfd.revents;
    check(rc == 0 || errno == EINTR, "ppoll(perf fd)");
    if (deadline.expired()) return 0;
  }
}

void burn_cpu(std::chrono::microseconds budget) {
  const std::int64_t end = monotonic_ns() + std::chrono::nanoseconds(budget).count();
  volatile std::uint64_t sink = 1;
  while (monotonic_ns() < end) {
    for (int i = 0; i < 10000; ++i) sink = sink * 6364136223846793005ULL + 1;
  }
}

}  // namespace sigwake
