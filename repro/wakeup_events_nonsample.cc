// A guard: wakeup_events=1 (not watermark) with only non-sample records (SWITCH).
// wakeup_events counts samples only (perf_output_sample() bumps rb->events; the
// SWITCH path does not), and a few records stay far below the default
// half-buffer watermark, so neither a wakeup nor a signal should come. A
// kernel that starts waking here has changed behaviour silently. On a kernel
// that behaves, the verdict is `no-wakeup`.
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include "lib/attrs.h"
#include "lib/budgets.h"
#include "lib/evidence.h"
#include "lib/fixture.h"
#include "lib/process.h"
#include "lib/repro.h"

namespace sigwake {

SIGWAKE_CASE(wakeup_events_nonsample, {.expected = {always(Verdict::kNoWakeup,
                                     "wakeup_events counts samples only: perf_output_sample() in kernel/events/core.c "
                                     "bumps rb->events, the SWITCH record path does not, and two records stay below "
                                     "the default half-buffer watermark")},
              .defining = kSiginfoEvidence,
              .shown = kShownSignal,
              .kconfig = kPerfConfig}) {
  SignalCapture sigio(SIGIO);
  perf_event_attr attr = switch_watermark_attr(1);
  attr.watermark = 0;
  attr.wakeup_events = 1;
  SwitchFixture f(attr);
  f.event.request_signals(getpid(), SIGIO);
  const short revents = f.trigger(kQuietWindow);  // no wakeup expected: the window is the test
  if (revents & POLLIN) {
    sigio.wait_for(1, Deadline(kSignalGrace));  // a wakeup came after all: would a signal follow?
  } else {
    sigio.accept_pending();  // no wakeup, so no irq_work that could still send one
  }

  const int records = add_record_evidence(report, f.ring.consume());
  add_poll_evidence(report, revents);
  add_signal_evidence(report, sigio);
  if (records == 0) return report.decide(Verdict::kNoRecord, "the child switched, no SWITCH record was written");
  if (sigio.count() > 0) return report.decide(Verdict::kDelivered, "a signal came for non-sample records");
  if (revents & POLLIN) return report.decide(Verdict::kNotDelivered, "POLLIN for non-sample records, no signal");
  report.decide(Verdict::kNoWakeup, "no wakeup and no signal for non-sample records, as wakeup_events promises");
}

}  // namespace sigwake
