// Control for watermark_sigio: the same watermark setup observed with poll().
// A sleeping poll() is woken on every kernel that writes PERF_RECORD_SWITCH (v4.3+).
#include <poll.h>

#include <chrono>

#include "lib/attrs.h"
#include "lib/budgets.h"
#include "lib/evidence.h"
#include "lib/process.h"
#include "lib/repro.h"

namespace sigwake {

SIGWAKE_CASE(watermark_poll) {
  pin_to_cpu(0);
  StoppedChild child;
  PerfEvent event = PerfEvent::open(switch_watermark_attr(1), child.pid(), -1);
  RingBuffer ring = RingBuffer::map(event.fd(), 0);
  event.enable();

  child.resume();  // runs once we sleep in poll: switch-in, stop, switch-out
  const short revents = wait_readable(event.fd(), kWakeupBudget);

  report.add("data_head", static_cast<long long>(ring.head()));
  const int records = add_record_evidence(report, ring.consume());
  add_poll_evidence(report, revents);

  if (revents & POLLIN) return report.decide(Verdict::kDelivered);
  if (records > 0) return report.decide(Verdict::kNotDelivered, "record written, poll() not woken within the budget");
  report.decide(Verdict::kError, "no record was written within the budget");
}

}  // namespace sigwake
