// Where SIGIO is counted: an SA_SIGINFO handler that records, async-signal-safely,
// every delivery of one signal with its siginfo and the receiving thread.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <limits>
#include <vector>

#include "deadline.h"

namespace sigwake {

struct Delivery {
  int signo = 0;
  int code = 0;       // si_code: POLL_IN, POLL_HUP, ...
  long band = 0;      // si_band: the poll mask (a SIGTRAP's si_addr, which shares its place)
  int fd = -1;        // si_fd (filled when F_SETSIG names the signal)
  int error = 0;      // si_errno (0 for every signal sigwake waits for)
  bool stale_bytes = false;  // a byte of the kernel's siginfo that no field of SIGPOLL's covers was not 0
  pid_t tid = 0;      // the thread the handler ran on
  std::int64_t at_ns = 0;  // CLOCK_MONOTONIC when the handler ran
  // A perf event's SIGTRAP (si_code TRAP_PERF): the event's sig_data, its type and flags
  // (TRAP_PERF_FLAG_ASYNC when it came while blocked), which glibc's siginfo_t does not name.
  std::uint64_t perf_data = 0;
  std::uint32_t perf_type = 0;
  std::uint32_t perf_flags = 0;
};

class SignalCapture {
 public:
  static constexpr int kLogged = 64;  // deliveries kept in detail; all are counted

  // Installs the handler and blocks `signo` in the calling thread, so that the
  // signal is only taken inside wait_for() / accept_pending().
  explicit SignalCapture(int signo);
  SignalCapture(const SignalCapture&) = delete;
  SignalCapture& operator=(const SignalCapture&) = delete;
  ~SignalCapture();  // restores the old action and mask

  int count() const;
  std::vector<Delivery> deliveries() const;

  // Sleeps with the signal unblocked until `n` deliveries were counted, the
  // deadline passed, or `stop_fd` (when given) became readable.
  bool wait_for(int n, const Deadline& deadline, int stop_fd = -1) const;

  // Counts a burst: waits up to `grace` for a first delivery, then `settle`
  // longer for any that follow (or until `most` have come; by default every
  // one, past the kLogged kept in detail). Returns the count.
  int collect(std::chrono::nanoseconds grace, std::chrono::nanoseconds settle,
              int most = std::numeric_limits<int>::max()) const;

  // Lets an already pending signal run its handler now, without sleeping.
  void accept_pending() const;

  // While it lives, the calling thread has the signal unblocked: a signal
  // directed at the process may land here (a decoy for thread-directed ones),
  // and one sent to this thread runs at once, as in rr's probe.
  class Unblocked {
   public:
    explicit Unblocked(const SignalCapture& capture);
    Unblocked(const Unblocked&) = delete;
    Unblocked& operator=(const Unblocked&) = delete;
    ~Unblocked();

   private:
    int signo_;
  };

 private:
  int signo_;
  struct sigaction old_action_ {};
  bool was_blocked_ = false;
};

}  // namespace sigwake
