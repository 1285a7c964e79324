// F_SETSIG with a real-time signal: the siginfo must say why (si_code POLL_IN),
// for which fd (si_fd), with which poll mask (si_band has POLLIN) and no error
// (si_errno 0, as send_sigio_to_task() sets it), and every other byte of the
// kernel's siginfo 0 (clear_siginfo(): no kernel memory in it); and
// real-time signals queue, one per wakeup, where SIGIO would merge them.
// Once through the sample-overflow path (the ring never wakes, so only
// __perf_event_overflow() signals) and once through the watermark path.
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include "lib/attrs.h"
#include "lib/budgets.h"
#include "lib/decide.h"
#include "lib/evidence.h"
#include "lib/fixture.h"
#include "lib/process.h"
#include "lib/repro.h"

namespace sigwake {
namespace {

// Every delivery must carry the siginfo F_SETSIG promises for `fd`; returns
// true when it decided (misdelivered).
bool decided_by_siginfo(Report& report, const SignalCapture& capture, int fd) {
  add_signal_evidence(report, capture);
  int wrong = 0;
  for (const Delivery& d : capture.deliveries()) {
    wrong += d.code != POLL_IN || d.fd != fd || !(d.band & POLLIN) || d.error != 0 || d.stale_bytes;
  }
  report.add("deliveries_with_wrong_siginfo", static_cast<long long>(wrong));
  report.add("queued", capture.count() > 1);
  if (wrong == 0) return false;
  report.decide(Verdict::kMisdelivered, "a signal came without the siginfo F_SETSIG promises (POLL_IN, fd, POLLIN, "
                                               "si_errno 0, every other byte 0)");
  return true;
}

}  // namespace

SIGWAKE_CASE(setsig_siginfo_overflow) {
  const int signo = SIGRTMIN + 2;
  SignalCapture capture(signo);
  // When the real-time signal queue is full, send_sigio_to_task() falls back to a plain SIGIO (fcntl(2)):
  // caught and counted, a fallback is evidence, never a killed program.
  SignalCapture fallback(SIGIO);
  PerfEvent event =
      PerfEvent::open(task_clock_overflow_attr(100'000, ring_data_bytes(kOverflowRingPagesLog2)), 0, -1);
  event.request_signals(getpid(), signo);
  RingBuffer ring = RingBuffer::map(event.fd(), kOverflowRingPagesLog2);
  event.enable();

  // Several samples while the signal is blocked: each overflow queues its own. Checked every 100 us of CPU
  // time and stopped at three samples, within the wakeup budget as the other overflow cases wait for theirs
  // (a 16 KiB-page arm64 kernel under TCG wrote them in bursts of 50-100, and once none within 50 ms).
  constexpr std::uint64_t kSamples = 3, kSampleBytes = 24;  // header + IP + PID/TID
  const Deadline deadline(kWakeupBudget);
  while (ring.head() < kSamples * kSampleBytes && !deadline.expired()) burn_cpu(100us);
  event.disable();
  capture.collect(kSignalGrace, kSettle);
  fallback.accept_pending();
  report.add("fallback_sigio", static_cast<long long>(fallback.count()));

  const int records = add_record_evidence(report, ring.consume());
  const short revents = wait_readable(event.fd(), 0ms);
  add_poll_evidence(report, revents);
  if (decided_by_siginfo(report, capture, event.fd())) return;
  decide_overflow_signal(report, {records, (revents & POLLIN) != 0, capture.count()});
}

SIGWAKE_CASE(setsig_siginfo_watermark) {
  const int signo = SIGRTMIN + 2;
  SignalCapture capture(signo);
  SwitchFixture f;
  f.event.request_signals(getpid(), signo);
  const short revents = f.trigger();  // two crossings: switch-in, then switch-out as it stops
  capture.collect(kSignalGrace, kSettle);

  const int records = add_record_evidence(report, f.ring.consume());
  add_poll_evidence(report, revents);
  if (decided_by_siginfo(report, capture, f.event.fd())) return;
  decide_watermark_signal(report, {records, (revents & POLLIN) != 0, capture.count()}, "SWITCH records");
}

}  // namespace sigwake
