// A perf event file descriptor, owned. perf_event_open errors become reasons a
// person can act on, and the kernel refusing a setup is `Unsupported`, not an error.
#pragma once

#include <linux/perf_event.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace sigwake {

// An attr with size set and everything else zero, as perf_event_open expects.
perf_event_attr blank_attr(std::uint32_t type, std::uint64_t config);

class PerfEvent {
 public:
  // Opens the event or throws Unsupported (the kernel's policy refused it, or a
  // probe shows it lacks a feature) / ReproError (our attr is at fault).
  static PerfEvent open(const perf_event_attr& attr, pid_t pid, int cpu, int group_fd = -1,
                        unsigned long flags = PERF_FLAG_FD_CLOEXEC);

  // Opens the event, or says which errno perf_event_open() refused it with: for cases whose verdict is
  // that refusal (a limit, a privilege check), where a refusal is not the kernel declining the setup.
  static struct OpenAttempt attempt(const perf_event_attr& attr, pid_t pid, int cpu, int group_fd = -1,
                                    unsigned long flags = PERF_FLAG_FD_CLOEXEC);

  PerfEvent(PerfEvent&& other) noexcept;
  PerfEvent& operator=(PerfEvent&& other) noexcept;
  PerfEvent(const PerfEvent&) = delete;
  PerfEvent& operator=(const PerfEvent&) = delete;
  ~PerfEvent();

  int fd() const { return fd_; }

  void enable() const;
  void disable() const;

  // PERF_EVENT_IOC_ID: the id the kernel writes for this event (PERF_SAMPLE_ID, PERF_SAMPLE_STREAM_ID).
  std::uint64_t id() const;

  // FASYNC delivery to the process `owner` (F_SETOWN; a process group when negative), to that one thread
  // (F_SETOWN_EX, F_OWNER_TID) or to process group `owner` (F_SETOWN_EX, F_OWNER_PGRP), with signal `signo`
  // named by F_SETSIG; signo 0 leaves F_SETSIG alone: the kernel's default path sends plain SIGIO (rr's probe).
  enum class Owner { kProcess, kThread, kGroup };
  void request_signals(pid_t owner, int signo, Owner kind = Owner::kProcess) const;

  // F_SETOWN (or F_SETOWN_EX, F_OWNER_TID), read back: request_signals()'s owner, or a new one later.
  void set_owner(pid_t owner, Owner kind = Owner::kProcess) const;

  // F_SETOWN (or F_SETOWN_EX, F_OWNER_TID) naming `gone`, a task that has exited, must fail: returns the errno.
  // A kernel that takes it leaves the fd owned by nobody: Misdelivered. A joined thread's number stays findable
  // until release_task() frees it, a moment after the join, so an acceptance is tried again until `budget` ends.
  int refuse_gone_owner(pid_t gone, Owner kind, std::chrono::milliseconds budget) const;

  // PERF_EVENT_IOC_SET_OUTPUT: this event's records go to `target`'s ring buffer.
  // A refusal is our error: every kernel sigwake boots has the ioctl.
  void set_output(const PerfEvent& target) const;

 private:
  explicit PerfEvent(int fd) : fd_(fd) {}
  int fd_ = -1;
};

struct OpenAttempt {
  std::optional<PerfEvent> event;
  int err = 0;  // perf_event_open()'s errno when `event` is empty
};

// Why perf_event_open may have failed with `err`, in words.
std::string explain_open_errno(int err);

}  // namespace sigwake
