#include "perf_event.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include "deadline.h"
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

namespace {

long raw_open(const perf_event_attr& attr, pid_t pid, int cpu, int group_fd, unsigned long flags) {
  return syscall(SYS_perf_event_open, &attr, pid, cpu, group_fd, flags);
}

// The attr features a kernel may lack, each copied alone onto a minimal event.
struct Feature {
  const char* name;
  bool (*set_in)(const perf_event_attr&);
  void (*copy)(const perf_event_attr& from, perf_event_attr& to);
};

constexpr Feature kFeatures[] = {
    {"context_switch (v4.3)", [](const perf_event_attr& a) { return a.context_switch != 0; },
     [](const perf_event_attr& f, perf_event_attr& t) { t.context_switch = f.context_switch; }},
    {"mmap_data", [](const perf_event_attr& a) { return a.mmap_data != 0; },
     [](const perf_event_attr& f, perf_event_attr& t) { t.mmap_data = f.mmap_data; }},
    {"watermark", [](const perf_event_attr& a) { return a.watermark != 0; },
     [](const perf_event_attr& f, perf_event_attr& t) {
       t.watermark = f.watermark;
       t.wakeup_watermark = f.wakeup_watermark;
     }},
    {"inherit", [](const perf_event_attr& a) { return a.inherit != 0; },
     [](const perf_event_attr& f, perf_event_attr& t) { t.inherit = f.inherit; }},
    {"inherit_thread (v5.13)", [](const perf_event_attr& a) { return a.inherit_thread != 0; },
     [](const perf_event_attr& f, perf_event_attr& t) {
       t.inherit = f.inherit;
       t.inherit_thread = f.inherit_thread;
     }},
    {"sigtrap with remove_on_exec (v5.13)", [](const perf_event_attr& a) { return a.sigtrap != 0; },
     [](const perf_event_attr& f, perf_event_attr& t) {
       t.sigtrap = f.sigtrap;
       t.remove_on_exec = f.remove_on_exec;
       t.sig_data = f.sig_data;
     }},
    {"remove_on_exec (v5.13)", [](const perf_event_attr& a) { return a.remove_on_exec != 0 && a.sigtrap == 0; },
     [](const perf_event_attr& f, perf_event_attr& t) { t.remove_on_exec = f.remove_on_exec; }},
    {"write_backward (v4.7)", [](const perf_event_attr& a) { return a.write_backward != 0; },
     [](const perf_event_attr& f, perf_event_attr& t) { t.write_backward = f.write_backward; }},
    {"PERF_FORMAT_LOST (v6.0)", [](const perf_event_attr& a) { return (a.read_format & PERF_FORMAT_LOST) != 0; },
     [](const perf_event_attr&, perf_event_attr& t) { t.read_format = PERF_FORMAT_LOST; }},
    {"sampling (sample_period, sample_type)",
     [](const perf_event_attr& a) { return a.sample_period != 0 || a.sample_type != 0; },
     [](const perf_event_attr& f, perf_event_attr& t) {
       t.sample_period = f.sample_period;
       t.sample_type = f.sample_type;
     }},
};

// A minimal event of the same type on the same task and CPU: what every kernel
// with this event type opens, privilege permitting.
perf_event_attr minimal_of(const perf_event_attr& attr) {
  perf_event_attr probe = blank_attr(attr.type, attr.config);
  probe.disabled = 1;
  probe.exclude_kernel = 1;  // what perf_event_paranoid 2 allows
  probe.exclude_hv = 1;
  return probe;
}

bool opens(const perf_event_attr& attr, pid_t pid, int cpu) {
  const long fd = raw_open(attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
  if (fd >= 0) close(static_cast<int>(fd));
  return fd >= 0;
}

// perf_event_open refused our attr with `err`. A probe decides whose fault that
// is: the kernel lacking a feature is Unsupported (the probe is named in the
// reason), an attr the kernel accepts feature by feature is our mistake.
[[noreturn]] void refused(const perf_event_attr& attr, pid_t pid, int cpu, int err) {
  const std::string why = "perf_event_open: " + explain_open_errno(err);
  if (err == EACCES || err == EPERM || err == ENOSYS) throw Unsupported(why);
  if (err != EINVAL && err != E2BIG && err != EOPNOTSUPP && err != ENOENT && err != ENODEV) throw ReproError(why);
  const perf_event_attr minimal = minimal_of(attr);
  if (!opens(minimal, pid, cpu)) {
    throw Unsupported(why + " (probe: a minimal event of type " + std::to_string(attr.type) + ", config " +
                      std::to_string(attr.config) + " fails too: " + explain_open_errno(errno) + ")");
  }
  for (const Feature& feature : kFeatures) {
    if (!feature.set_in(attr)) continue;
    perf_event_attr probe = minimal;
    feature.copy(attr, probe);
    if (!opens(probe, pid, cpu)) {
      throw Unsupported(why + " (probe: the kernel lacks " + feature.name + ": a minimal event opens, with " +
                        feature.name + " alone it fails " + (strerrorname_np(errno) ? strerrorname_np(errno) : "") + ")");
    }
  }
  throw ReproError(why + " (probe: the kernel accepts each feature of this attr alone, so the attr sigwake built "
                   "is at fault)");
}

// F_SETOWN, or F_SETOWN_EX with F_OWNER_TID: whether the kernel took `owner` (errno says why not).
bool name_owner(int fd, pid_t owner, PerfEvent::Owner kind) {
  if (kind == PerfEvent::Owner::kProcess) return fcntl(fd, F_SETOWN, owner) == 0;
  const f_owner_ex wanted{kind == PerfEvent::Owner::kGroup ? F_OWNER_PGRP : F_OWNER_TID, owner};
  return fcntl(fd, F_SETOWN_EX, &wanted) == 0;
}

const char* owner_call(PerfEvent::Owner kind) {
  switch (kind) {
    case PerfEvent::Owner::kProcess: return "fcntl(F_SETOWN)";
    case PerfEvent::Owner::kThread: return "fcntl(F_SETOWN_EX, F_OWNER_TID)";
    case PerfEvent::Owner::kGroup: return "fcntl(F_SETOWN_EX, F_OWNER_PGRP)";
  }
  return "fcntl";
}

}  // namespace

PerfEvent PerfEvent::open(const perf_event_attr& attr, pid_t pid, int cpu, int group_fd, unsigned long flags) {
  OpenAttempt got = attempt(attr, pid, cpu, group_fd, flags);
  if (!got.event) refused(attr, pid, cpu, got.err);
  return std::move(*got.event);
}

OpenAttempt PerfEvent::attempt(const perf_event_attr& attr, pid_t pid, int cpu, int group_fd, unsigned long flags) {
  const long fd = raw_open(attr, pid, cpu, group_fd, flags);
  if (fd < 0) return {std::nullopt, errno};
  return {PerfEvent(static_cast<int>(fd)), 0};
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

std::uint64_t PerfEvent::id() const {
  std::uint64_t id = 0;
  check(ioctl(fd_, PERF_EVENT_IOC_ID, &id) == 0, "PERF_EVENT_IOC_ID");
  return id;
}

void PerfEvent::request_signals(pid_t owner, int signo, Owner kind) const {
  // Each setting is read back: an owner or signal number the kernel keeps wrongly sends the signal astray.
  const int unset = fcntl(fd_, F_GETSIG);
  check(unset >= 0, "fcntl(F_GETSIG)");
  if (unset != 0) throw Misdelivered("F_GETSIG of a fresh fd is " + std::to_string(unset) + ", not 0");
  const int flags = fcntl(fd_, F_GETFL);
  check(flags >= 0, "fcntl(F_GETFL)");
  check(fcntl(fd_, F_SETFL, flags | O_ASYNC) == 0, "fcntl(F_SETFL, O_ASYNC)");
  set_owner(owner, kind);
  if (signo != 0) {
    if (fcntl(fd_, F_SETSIG, _NSIG) != -1 || errno != EINVAL) {
      throw Misdelivered("F_SETSIG took signal " + std::to_string(_NSIG) + ", which is no signal (EINVAL expected)");
    }
    check(fcntl(fd_, F_SETSIG, signo) == 0, "fcntl(F_SETSIG)");
    const int set = fcntl(fd_, F_GETSIG);
    if (set != signo) throw Misdelivered("F_GETSIG reads " + std::to_string(set) + " after F_SETSIG " + std::to_string(signo));
  }
}

void PerfEvent::set_owner(pid_t owner, Owner kind) const {
  check(name_owner(fd_, owner, kind), owner_call(kind));
  const f_owner_ex wanted = kind == Owner::kThread ? f_owner_ex{F_OWNER_TID, owner}
                            : kind == Owner::kGroup ? f_owner_ex{F_OWNER_PGRP, owner}
                            : owner < 0            ? f_owner_ex{F_OWNER_PGRP, -owner}
                                                   : f_owner_ex{F_OWNER_PID, owner};
  f_owner_ex got{};
  check(fcntl(fd_, F_GETOWN_EX, &got) == 0, "fcntl(F_GETOWN_EX)");
  if (got.type != wanted.type || got.pid != wanted.pid) {
    throw Misdelivered("F_GETOWN_EX reads owner type " + std::to_string(got.type) + " pid " +
                       std::to_string(got.pid) + " after setting type " + std::to_string(wanted.type) + " pid " +
                       std::to_string(wanted.pid));
  }
}

int PerfEvent::refuse_gone_owner(pid_t gone, Owner kind, std::chrono::milliseconds budget) const {
  const Deadline deadline(budget);
  while (name_owner(fd_, gone, kind)) {
    if (deadline.expired()) {
      throw Misdelivered(std::string(owner_call(kind)) + " took " + std::to_string(gone) +
                         ", which had exited (ESRCH expected)");
    }
    sched_yield();
  }
  return errno;
}

void PerfEvent::set_output(const PerfEvent& target) const {
  // In every kernel sigwake can boot (v2.6.34+): a failure means two events we
  // paired wrongly (another task or CPU), our mistake.
  check(ioctl(fd_, PERF_EVENT_IOC_SET_OUTPUT, target.fd_) == 0, "PERF_EVENT_IOC_SET_OUTPUT");
}

}  // namespace sigwake
