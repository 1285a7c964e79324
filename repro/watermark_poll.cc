// Control for watermark_sigio: the same watermark setup observed with poll().
// A sleeping poll() is woken on every kernel that writes PERF_RECORD_SWITCH (v4.3+).
#include <poll.h>

#include "lib/evidence.h"
#include "lib/fixture.h"
#include "lib/repro.h"

namespace sigwake {

SIGWAKE_CASE(watermark_poll) {
  SwitchFixture f;
  const short revents = f.trigger();

  report.add("data_head", static_cast<long long>(f.ring.head()));
  const int records = add_record_evidence(report, f.ring.consume());
  add_poll_evidence(report, revents);

  if (records == 0) return report.decide(Verdict::kNoRecord, "the child ran, the kernel wrote no SWITCH record");
  if (revents & POLLIN) return report.decide(Verdict::kDelivered, "poll() woke with POLLIN");
  report.decide(Verdict::kNoWakeup, "SWITCH records past the watermark, poll() never reported POLLIN");
}

}  // namespace sigwake
