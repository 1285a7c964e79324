#include "perf_event.h"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "errors.h"

namespace sigwake {

perf_event_attr blank_attr(std::uint32_t type, std::uint64_t config) {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = type;
  attr.config = config;
  return attr;
}

std::string explain_open_errno(int err) {
  switch (err) {
    case ENOENT:
      return "ENOENT: the kernel does not know this event type or config";
    case EINVAL:
      return "EINVAL: the kernel rejects an attr field (too old for it, or an invalid combination)";
    case EOPNOTSUPP:
      return "EOPNOTSUPP: the kernel or PMU does not support a requested feature";
    case E2BIG:
      return "E2BIG: the kernel's perf_event_attr is older than ours and a new field is set";
    case EACCES:
      return "EACCES: perf_event_paranoid or a missing capability refuses this event";
    case EPERM:
      return "EPERM: perf_event_paranoid, a capability or an LSM refuses this event";
    case ENOSYS:
      return "ENOSYS: the kernel was built without perf events (CONFIG_PERF_EVENTS)";
    case ENODEV:
      return "ENODEV: the event is not available on this CPU or machine";
    default:
      return std::string(strerrorname_np(err) ? strerrorname_np(err) : "errno") + ": " + std::strerror(err);
  }
}

PerfEvent PerfEvent::open(const perf_event_attr& attr, pid_t pid, int cpu, int group_fd, unsigned long flags) {
  const long fd = syscall(SYS_perf_event_open, &attr, pid, cpu, group_fd, flags);
  if (fd >= 0) return PerfEvent(static_cast<int>(fd));
  const int err = errno;
  if (err == EBADF || err == EFAULT || err == EMFILE || err == ESRCH) {
    throw ReproError("perf_event_open: " + explain_open_errno(err));
  }
  throw Unsupported("perf_event_open: " + explain_open_errno(err));
}

PerfEvent::PerfEvent(PerfEvent&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

PerfEvent& PerfEvent::operator=(PerfEvent&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

PerfEvent::~PerfEvent() {
  if (fd_ >= 0) ::close(fd_);
}

void PerfEvent::enable() const { check(ioctl(fd_, PERF_EVENT_IOC_ENABLE, 0) == 0, "PERF_EVENT_IOC_ENABLE"); }

void PerfEvent::disable() const { check(ioctl(fd_, PERF_EVENT_IOC_DISABLE, 0) == 0, "PERF_EVENT_IOC_DISABLE"); }

void PerfEvent::request_signals(pid_t owner, int signo, Owner kind) const {
  const int flags = fcntl(fd_, F_GETFL);
  check(flags >= 0, "fcntl(F_GETFL)");
  check(fcntl(fd_, F_SETFL, flags | O_ASYNC) == 0, "fcntl(F_SETFL, O_ASYNC)");
  if (kind == Owner::kProcess) {
    check(fcntl(fd_, F_SETOWN, owner) == 0, "fcntl(F_SETOWN)");
  } else {
    const f_owner_ex thread{F_OWNER_TID, owner};
    check(fcntl(fd_, F_SETOWN_EX, &thread) == 0, "fcntl(F_SETOWN_EX, F_OWNER_TID)");
  }
  check(fcntl(fd_, F_SETSIG, signo) == 0, "fcntl(F_SETSIG)");
}

void PerfEvent::set_output(const PerfEvent& target) const {
  if (ioctl(fd_, PERF_EVENT_IOC_SET_OUTPUT, target.fd_) != 0) {
    throw Unsupported(errno_text("PERF_EVENT_IOC_SET_OUTPUT"));
  }
}

}  // namespace sigwake
