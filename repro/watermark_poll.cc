// Control for watermark_sigio: the same watermark setup observed with poll().
// A sleeping poll() is woken on every kernel that writes PERF_RECORD_SWITCH (v4.3+).
// perf_poll() reports a wakeup once: it takes rb->poll with atomic_xchg(..., 0),
// so with the event disabled and that report read, poll() must be quiet.
//  - watermark_poll_rdnorm: a poll() asking POLLRDNORM alone (POSIX's "normal
//    data", which Linux's poll(2) equates with POLLIN) is woken as well.
//  - watermark_poll_without_ring: an event with no ring mapped has nothing to
//    wait for, and perf_poll() says so at once with POLLHUP.
#include <poll.h>
#include <unistd.h>

#include "lib/attrs.h"
#include "lib/evidence.h"
#include "lib/fixture.h"
#include "lib/process.h"
#include "lib/repro.h"

namespace sigwake {

SIGWAKE_CASE(watermark_poll, {.expected = {always(Verdict::kDelivered,
                                     "perf_output_wakeup() has set rb->poll and queued the wakeup since "
                                     "PERF_RECORD_SWITCH exists (45ac1403f564 \"perf: Add PERF_RECORD_SWITCH to "
                                     "indicate context switches\", v4.3); perf_poll() in kernel/events/core.c takes "
                                     "rb->poll with atomic_xchg(&rb->poll, 0), so a wakeup is reported once")},
              .shown = {"records", "pollin"},
              .kconfig = kPerfConfig}) {
  SwitchFixture f;
  const short revents = f.trigger();
  f.event.disable();  // no record after this one: the next two polls see only what is left
  wait_readable(f.event.fd(), 0ms);
  const short again = wait_readable(f.event.fd(), 0ms);

  report.add("data_head", static_cast<long long>(f.ring.head()));
  const int records = add_record_evidence(report, f.ring.consume());
  add_poll_evidence(report, revents);
  report.add("pollin_again", (again & POLLIN) != 0);

  if (records == 0) return report.decide(Verdict::kNoRecord, "the child ran, the kernel wrote no SWITCH record");
  if (!(revents & POLLIN)) {
    return report.decide(Verdict::kNoWakeup, "SWITCH records past the watermark, poll() never reported POLLIN");
  }
  if (again & POLLIN) {
    return report.decide(Verdict::kWrongCount, "poll() reported POLLIN again with the event disabled and its "
                                               "wakeup already read");
  }
  report.decide(Verdict::kDelivered, "poll() woke with POLLIN, once");
}

SIGWAKE_CASE(watermark_poll_rdnorm,
             {.expected = {changed_at("6.15", "c96fff391c09", Verdict::kNoWakeup, Verdict::kDelivered,
                                      "c96fff391c09 \"perf/ring_buffer: Allow the EPOLLRDNORM flag for poll\" (v6.15; "
                                      "stable 6.12.23 and 6.1.134, as Debian's changelogs place it): perf_output_wakeup() in "
                                      "kernel/events/ring_buffer.c sets rb->poll to EPOLLIN | EPOLLRDNORM; before, "
                                      "EPOLLIN alone, and a poller asking POLLRDNORM only was never told")
                               .backported({"6.12.23", "6.1.134"})},
              .shown = {"records", "pollrdnorm"},
              .kconfig = kPerfConfig}) {
  SwitchFixture f;
  f.poll_events = POLLRDNORM;
  const short revents = f.trigger();
  const int records = add_record_evidence(report, f.ring.consume());
  report.add("pollrdnorm", (revents & POLLRDNORM) != 0);
  report.add("revents", static_cast<long long>(revents));
  if (records == 0) return report.decide(Verdict::kNoRecord, "the child ran, the kernel wrote no SWITCH record");
  if (!(revents & POLLRDNORM)) {
    return report.decide(Verdict::kNoWakeup, "SWITCH records past the watermark, a poll() asking POLLRDNORM alone "
                                             "never reported it");
  }
  report.decide(Verdict::kDelivered, "poll() asking POLLRDNORM alone woke with it");
}

SIGWAKE_CASE(watermark_poll_without_ring, {.expected = {always(Verdict::kDelivered,
                                     "perf_poll() in kernel/events/core.c starts from EPOLLHUP and only an event's "
                                     "mapped ring (event->rb) replaces it: an event with no ring reports POLLHUP at "
                                     "once")},
              .shown = {"records", "pollin"},
              .kconfig = kPerfConfig}) {
  StoppedChild child;
  const PerfEvent event = PerfEvent::open(switch_watermark_attr(1), child.pid(), -1);
  const short revents = wait_readable(event.fd(), 0ms);
  add_poll_evidence(report, revents);
  if (revents & POLLHUP) return report.decide(Verdict::kDelivered, "poll() reported POLLHUP: no ring to wait on");
  report.decide(Verdict::kMisdelivered, "poll() on an event without a ring did not report POLLHUP");
}

}  // namespace sigwake
