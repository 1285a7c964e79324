// Processes and CPUs a reproducer arranges around its perf event.
#pragma once

#include <poll.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "budgets.h"

namespace sigwake {

// Pins the calling thread (and children forked after) to one CPU, so that a
// record, the irq_work it raises and our wait all run on that CPU, in order.
void pin_to_cpu(int cpu);

// Forks a child that stops itself at once (SIGSTOP) and, once resumed, runs
// `body`, writes one byte to `ran_fd` (when >= 0) and stops itself again;
// returns once the first stop is seen. With `own_group` the child leads its own
// process group, so that whatever it forks dies with it; without, it stays in
// the caller's.
pid_t fork_stopped(const std::function<void()>& body, bool own_group, int ran_fd = -1);

// SIGKILL to a child of ours (and to the process group it leads, with `group`), then reaps it.
void kill_and_reap(pid_t pid, bool group = false);

// A forked child that stops itself at once and, once resumed, runs and stops
// itself again: a task whose context switches we cause at a moment of our
// choosing. It stays alive: once the monitored task exits, perf_poll() reports
// POLLHUP instead of POLLIN, which would hide the wakeup we look for.
class StoppedChild {
 public:
  // Once resumed the child runs `after_resume` (if any) before it stops again.
  explicit StoppedChild(std::function<void()> after_resume = {});  // returns once the child is stopped
  StoppedChild(const StoppedChild&) = delete;
  StoppedChild& operator=(const StoppedChild&) = delete;
  ~StoppedChild() { end(); }

  // Kills its process group and reaps it (now, or at the latest when it goes out of scope).
  void end();

  pid_t pid() const { return pid_; }
  void resume() const;  // SIGCONT: it switches in, runs, stops again (switching out)

  // Whether, within `budget` of resume(), it ran `after_resume` to the end and
  // stopped again: the proof that the trigger ran.
  bool ran(std::chrono::milliseconds budget);

 private:
  int ran_fd_ = -1;
  pid_t pid_ = -1;
  bool stopped_again_ = false;
  bool ended_ = false;
};

// A forked child in our process group with `signo` blocked, waiting for it: a
// second member of the group, to see whether a signal sent to the group reached
// it too. It waits until asked or killed. `setup`, run in the child before it
// waits, can move it (another group, other credentials); a child whose setup
// throws never waits, and the constructor throws ReproError. It tells each
// signal as it comes and stays until we are done with it; then it stops by
// itself, so a witness we may not kill (another uid) ends too.
class SignalWitness {
 public:
  explicit SignalWitness(int signo, const std::function<void()>& setup = {});  // returns once it is waiting
  SignalWitness(const SignalWitness&) = delete;
  SignalWitness& operator=(const SignalWitness&) = delete;
  ~SignalWitness();  // kills and reaps it

  // Whether it has one more signal than received() told before, or gets it within `budget`. The witness
  // must be scheduled to say it got one, so a signal the kernel must send is waited for with the wakeup
  // budget, not kSignalGrace: under TCG a busy host can hold the guest past 30 ms (owner_changed read
  // not-delivered in 1 of 5 runs while two guests shared 2 cores, every signal sent: send_sigio 24).
  bool received(std::chrono::milliseconds budget = kWakeupBudget);

  // Whether a signal received() has not told was sent to it before this call: no window to wait out, the
  // witness is asked and answers once each signal sent before the question ran its handler.
  bool signalled_by_now();

  pid_t pid() const { return pid_; }

 private:
  void stop();  // ends and reaps it

  int answer_fd_ = -1;
  int end_fd_ = -1;  // closed: the witness stops waiting
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

// A pipe between a case and a process it made (a byte at a time, or words until the writer is gone);
// the ends still open close with it.
class Pipe {
 public:
  Pipe();
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  ~Pipe();

  int read_fd() const { return fds_[0]; }
  // In a child before its exec: the end the new image keeps (close-on-exec cleared), by its number.
  int keep_write_end_across_exec() const { return keep(1); }
  int keep_read_end_across_exec() const { return keep(0); }

  bool wait_byte(std::chrono::milliseconds budget) const;  // a byte came within `budget`
  void send_byte() const;

  // One side of a fork keeps one end: the writer closes its read end, the reader its write end.
  void close_read_end() { close_end(0); }
  void close_write_end() { close_end(1); }
  // Writes `words` as far as the pipe takes them (a reader gone is no error: nobody asks any more).
  void send(const std::string& words) const;
  // Everything written until every write end is closed (the writer exited, or its exec closed it).
  std::string read_to_end() const;

 private:
  int keep(int end) const;
  void close_end(int end);
  int fds_[2];
};

// poll() for `events` (POLLIN) on `fd` until the deadline; returns the revents seen (0 if
// none). Readiness that poll() only finds in the look it takes when its timeout
// ends counts as none: nothing woke the sleeper, so a kernel that sets the state
// but never wakes its pollers does not pass for one that does.
short wait_readable(int fd, std::chrono::milliseconds budget, short events = POLLIN);

// Whether this program runs on a machine sigwake booted (its initramfs keeps the programs under /repro/):
// only there may a case change a machine-wide setting, never on a host it runs on natively.
bool in_sigwake_guest();

// Spends CPU time in user space for about `budget`, for task-clock events to count.
void burn_cpu(std::chrono::microseconds budget);

// Maps one anonymous page and unmaps it: one PERF_RECORD_MMAP for an event with mmap_data that takes it.
// Returns the page's address, which the record names.
std::uint64_t map_one_page();

}  // namespace sigwake
