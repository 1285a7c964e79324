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
  if (!child.ran(kWakeupBudget)) throw ReproError("the monitored child never ran");

  report.add("data_head", static_cast<long long>(ring.head()));
  const int records = add_record_evidence(report, ring.consume());
  add_poll_evidence(report, revents);

  if (records == 0) return report.decide(Verdict::kNoRecord, "the child ran, the kernel wrote no SWITCH record");
  if (revents & POLLIN) return report.decide(Verdict::kDelivered, "poll() woke with POLLIN");
  report.decide(Verdict::kNoWakeup, "SWITCH records past the watermark, poll() never reported POLLIN");
}

}  // namespace sigwake
