// Control for watermark_sigio: a sample overflow raises SIGIO on every kernel,
// because __perf_event_overflow() sets pending_kill before queueing the wakeup.
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>

#include "lib/attrs.h"
#include "lib/budgets.h"
#include "lib/evidence.h"
#include "lib/process.h"
#include "lib/repro.h"

namespace sigwake {

constexpr std::uint64_t kPeriodNs = 100'000;

SIGWAKE_CASE(overflow_sigio) {
  SignalCapture sigio(SIGIO);  // first in, last out: outlives the event
  PerfEvent event = PerfEvent::open(task_clock_sampling_attr(kPeriodNs), 0, -1);
  event.request_signals(getpid(), SIGIO);
  RingBuffer ring = RingBuffer::map(event.fd(), 0);
  event.enable();

  // Our own CPU time is the trigger: spend it until the first signal.
  const Deadline deadline(kWakeupBudget);
  const std::int64_t start = monotonic_ns();
  while (sigio.count() == 0 && !deadline.expired()) {
    burn_cpu(1ms);
    sigio.accept_pending();
  }
  event.disable();
  const std::int64_t decided = monotonic_ns();
  const short revents = wait_readable(event.fd(), 0ms);

  report.add("data_head", static_cast<long long>(ring.head()));
  const int records = add_record_evidence(report, ring.consume());
  add_poll_evidence(report, revents);
  add_signal_evidence(report, sigio);
  report.add("decided_after_us", static_cast<long long>((decided - start) / 1000));

  if (sigio.count() > 0) return report.decide(Verdict::kDelivered);
  if (records > 0 && (revents & POLLIN)) {
    return report.decide(Verdict::kNotDelivered, "samples written and POLLIN reported, no SIGIO within the budget");
  }
  report.decide(Verdict::kError, "no sample was written within the budget");
}

}  // namespace sigwake
