// PERF_EVENT_IOC_SET_OUTPUT: event B (the source, writing SWITCH records)
// sends its records into event A's ring buffer (the target, which writes none
// itself). With FASYNC on A only, on B only, or on both: whose owner gets the
// signal when B's records cross A's watermark? perf_output_wakeup() marks
// handle->event, the event that wrote the record (B), and perf_event_wakeup()
// signals perf_event_fasync() of that event: B's owner, never A's. And a
// per-task event of another task (ours) may not join A's buffer at all, and
// SET_OUTPUT -1 detaches B again.
#include <errno.h>
#include <poll.h>
#include <sys/ioctl.h>
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

struct Sides {
  bool fasync_on_target;
  bool fasync_on_source;
};

// Whether the target's owner was signalled defines the case beyond its verdict; both owners' counts are shown.
Facts set_output_facts(Expectation expected) {
  return {.expected = {std::move(expected)},
          .defining = {"target_signals"},
          .shown = {"records", "pollin", "target_signals", "source_signals"},
          .kconfig = kPerfConfig};
}

}  // namespace

SIGWAKE_VARIANT_CASE(set_output_sigio, Sides) {
  const auto [fasync_on_target, fasync_on_source] = variant;
  const int target_signo = SIGRTMIN + 3, source_signo = SIGRTMIN + 4;  // tell the owners apart
  SignalCapture target_signals(target_signo), source_signals(source_signo);
  perf_event_attr silent = switch_watermark_attr(1);
  silent.context_switch = 0;
  SwitchFixture f(silent);  // the target: its buffer, none of its own records
  {  // per-task events of two tasks never share a buffer: perf_event_set_output() refuses (EINVAL)
    const PerfEvent ours = PerfEvent::open(silent, 0, -1);
    const bool refused = ioctl(ours.fd(), PERF_EVENT_IOC_SET_OUTPUT, f.event.fd()) == -1 && errno == EINVAL;
    report.add("set_output_across_tasks", refused ? "EINVAL" : "accepted");
    if (!refused) {
      return report.decide(Verdict::kMisdelivered, "PERF_EVENT_IOC_SET_OUTPUT joined another task's per-task "
                                                   "event to the buffer: its records would land there");
    }
  }
  PerfEvent source = PerfEvent::open(switch_watermark_attr(1), f.child.pid(), -1);
  source.set_output(f.event);
  if (fasync_on_target) f.event.request_signals(getpid(), target_signo);
  if (fasync_on_source) source.request_signals(getpid(), source_signo);
  source.enable();
  const short revents = f.trigger();
  // Each owner gets its own signal number: wait on the one asked for (the source
  // when both are), then take whatever the other has pending.
  const SignalCapture& asked = fasync_on_source ? source_signals : target_signals;
  const SignalCapture& other = fasync_on_source ? target_signals : source_signals;
  asked.collect(kSignalGrace, kSettle);
  other.accept_pending();

  report.add("fasync_on", fasync_on_target && fasync_on_source ? "both" : fasync_on_target ? "target" : "source");
  const int records = add_record_evidence(report, f.ring.consume());
  add_poll_evidence(report, revents);
  add_signal_evidence(report, target_signals, "target_");
  add_signal_evidence(report, source_signals, "source_");

  // SET_OUTPUT -1 sends the source's records back to a buffer of its own (perf_event_open(2)).
  check(ioctl(source.fd(), PERF_EVENT_IOC_SET_OUTPUT, -1L) == 0, "PERF_EVENT_IOC_SET_OUTPUT -1");

  if (fasync_on_source && target_signals.count() > 0) {
    return report.decide(Verdict::kMisdelivered, "the buffer owner (target) was signalled for the source's records");
  }
  decide_watermark_signal(report, {records, (revents & POLLIN) != 0, target_signals.count() + source_signals.count()},
                          "SWITCH records in the shared buffer");
}

SIGWAKE_VARIANT(set_output_sigio, fasync_on_target, (Sides{true, false}),
                {set_output_facts(always(Verdict::kNotDelivered,
                                         "with PERF_EVENT_IOC_SET_OUTPUT the record's writer is handle->event (the "
                                         "source event): perf_output_wakeup() in kernel/events/ring_buffer.c sets "
                                         "pending_kill on it (since v6.10) and perf_event_wakeup() signals "
                                         "perf_event_fasync() of that event, so the buffer owner's FASYNC is never "
                                         "used"))});
SIGWAKE_VARIANT(set_output_sigio, fasync_on_source, (Sides{false, true}), {set_output_facts(watermark_fix())});
SIGWAKE_VARIANT(set_output_sigio, fasync_on_both, (Sides{true, true}), {set_output_facts(watermark_fix())});

}  // namespace sigwake
