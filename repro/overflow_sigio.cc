// Control for watermark_sigio: a sample overflow raises SIGIO on every kernel,
// because __perf_event_overflow() sets pending_kill and queues the wakeup
// itself. The ring's watermark is its whole data area, so the output path
// (perf_output_wakeup()) never fires: a signal here comes from the overflow
// path alone, and poll() must stay quiet.
//  - overflow_sigio_refresh: PERF_EVENT_IOC_REFRESH 1 arms the event for one
//    overflow; at it __perf_event_overflow() sets pending_kill to POLL_HUP and
//    disables the event: one signal with si_code POLL_HUP, one sample, no more.
#include <poll.h>
#include <sys/ioctl.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>

#include "lib/attrs.h"
#include "lib/budgets.h"
#include "lib/decide.h"
#include "lib/evidence.h"
#include "lib/process.h"
#include "lib/repro.h"

namespace sigwake {

constexpr std::uint64_t kPeriodNs = 100'000;

SIGWAKE_CASE(overflow_sigio) {
  SignalCapture sigio(SIGIO);  // first in, last out: outlives the event
  PerfEvent event =
      PerfEvent::open(task_clock_overflow_attr(kPeriodNs, ring_data_bytes(kOverflowRingPagesLog2)), 0, -1);
  event.request_signals(getpid(), SIGIO);
  RingBuffer ring = RingBuffer::map(event.fd(), kOverflowRingPagesLog2);
  event.enable();

  // Our own CPU time is the trigger: spend it until the first sample, then
  // give its signal the grace.
  const Deadline deadline(kWakeupBudget);
  const std::int64_t start = monotonic_ns();
  while (ring.head() == 0 && !deadline.expired()) burn_cpu(1ms);
  event.disable();
  sigio.wait_for(1, Deadline(kSignalGrace));
  const std::int64_t decided = monotonic_ns();
  const short revents = wait_readable(event.fd(), 0ms);

  report.add("data_head", static_cast<long long>(ring.head()));
  const int records = add_record_evidence(report, ring.consume());
  add_poll_evidence(report, revents);
  add_signal_evidence(report, sigio);
  report.add("decided_after_us", static_cast<long long>((decided - start) / 1000));
  decide_overflow_signal(report, {records, (revents & POLLIN) != 0, sigio.count()});
}

SIGWAKE_CASE(overflow_sigio_refresh) {
  const int signo = SIGRTMIN + 7;
  SignalCapture capture(signo);
  PerfEvent event =
      PerfEvent::open(task_clock_overflow_attr(kPeriodNs, ring_data_bytes(kOverflowRingPagesLog2)), 0, -1);
  event.request_signals(getpid(), signo);
  RingBuffer ring = RingBuffer::map(event.fd(), kOverflowRingPagesLog2);
  check(ioctl(event.fd(), PERF_EVENT_IOC_REFRESH, 1) == 0, "PERF_EVENT_IOC_REFRESH");

  // Spend CPU time until the first sample, then as long again: a disabled event writes no more.
  const Deadline deadline(kWakeupBudget);
  const std::int64_t start = monotonic_ns();
  while (ring.head() == 0 && !deadline.expired()) burn_cpu(1ms);
  burn_cpu(std::chrono::microseconds((monotonic_ns() - start) / 1000 + 1000));
  capture.collect(kSignalGrace, kSettle);
  const short revents = wait_readable(event.fd(), 0ms);

  const int records = add_record_evidence(report, ring.consume());
  add_poll_evidence(report, revents);
  add_signal_evidence(report, capture);
  if (capture.count() > 0 && capture.deliveries()[0].code != POLL_HUP) {
    return report.decide(Verdict::kMisdelivered, "the refresh limit's signal came without si_code POLL_HUP");
  }
  if (records > 1 || capture.count() > 1) {
    return report.decide(Verdict::kWrongCount, std::to_string(records) + " samples and " +
                                                   std::to_string(capture.count()) +
                                                   " signals where REFRESH 1 allows one: the event was not disabled");
  }
  decide_overflow_signal(report, {records, (revents & POLLIN) != 0, capture.count()});
}

}  // namespace sigwake
