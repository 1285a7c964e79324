// F_SETSIG with a real-time signal: the siginfo must say why (si_code POLL_IN),
// for which fd (si_fd), and with which poll mask (si_band has POLLIN); and
// real-time signals queue, one per wakeup, where SIGIO would merge them.
// Once through the sample-overflow path and once through the watermark path.
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include "lib/attrs.h"
#include "lib/budgets.h"
#include "lib/evidence.h"
#include "lib/process.h"
#include "lib/repro.h"

namespace sigwake {
namespace {

// Every delivery must carry the siginfo F_SETSIG promises for `fd`.
void decide_siginfo(Report& report, const SignalCapture& capture, int fd, int records, short revents) {
  add_signal_evidence(report, capture);
  int wrong = 0;
  for (const Delivery& d : capture.deliveries()) wrong += d.code != POLL_IN || d.fd != fd || !(d.band & POLLIN);
  report.add("deliveries_with_wrong_siginfo", static_cast<long long>(wrong));
  report.add("queued", capture.count() > 1);
  if (capture.count() > 0 && wrong == 0) return report.decide(Verdict::kDelivered);
  if (capture.count() > 0) return report.decide(Verdict::kNotDelivered, "a signal came without the promised siginfo");
  if (records > 0 && (revents & POLLIN)) return report.decide(Verdict::kNotDelivered, "records and POLLIN, no signal");
  report.decide(Verdict::kError, "no wakeup within the budget");
}

}  // namespace

SIGWAKE_CASE(setsig_siginfo_overflow) {
  const int signo = SIGRTMIN + 2;
  SignalCapture capture(signo);
  PerfEvent event = PerfEvent::open(task_clock_sampling_attr(100'000), 0, -1);
  event.request_signals(getpid(), signo);
  RingBuffer ring = RingBuffer::map(event.fd(), 0);
  event.enable();

  // Several samples while the signal is blocked: each overflow queues its own.
  constexpr std::uint64_t kSamples = 3, kSampleBytes = 24;  // header + IP + PID/TID
  const Deadline deadline(kWakeupBudget);
  while (ring.head() < kSamples * kSampleBytes && !deadline.expired()) burn_cpu(1ms);
  event.disable();
  capture.collect(kSignalGrace, kSettle);

  const int records = add_record_evidence(report, ring.consume());
  const short revents = wait_readable(event.fd(), 0ms);
  add_poll_evidence(report, revents);
  decide_siginfo(report, capture, event.fd(), records, revents);
}

SIGWAKE_CASE(setsig_siginfo_watermark) {
  const int signo = SIGRTMIN + 2;
  SignalCapture capture(signo);
  pin_to_cpu(0);
  StoppedChild child;
  PerfEvent event = PerfEvent::open(switch_watermark_attr(1), child.pid(), -1);
  event.request_signals(getpid(), signo);
  RingBuffer ring = RingBuffer::map(event.fd(), 0);
  event.enable();

  child.resume();  // two crossings: switch-in, then switch-out as it stops
  const short revents = wait_readable(event.fd(), kWakeupBudget);
  capture.collect(kSignalGrace, kSettle);

  const int records = add_record_evidence(report, ring.consume());
  add_poll_evidence(report, revents);
  decide_siginfo(report, capture, event.fd(), records, revents);
}

}  // namespace sigwake
