// rr's case: does a ring-buffer watermark wakeup raise SIGIO on a FASYNC perf fd?
// Fixed upstream by fd20bb51ed39 "perf/ring_buffer: Trigger IO signals for
// watermark_wakeup" (v6.10); before it, perf_output_wakeup() woke poll() only.
//  - watermark_sigio: F_SETSIG names SIGIO, so send_sigio_to_task() takes its
//    siginfo path (si_code POLL_IN).
//  - watermark_sigio_default_signal: no F_SETSIG (owner signum 0, as rr does),
//    so the kernel's default path sends a plain SIGIO (si_code SI_KERNEL).
//  - watermark_sigio_process_group: F_SETOWN with a negative id, our own process
//    group: send_sigio() walks the group's tasks instead of naming one.
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>

#include "lib/decide.h"
#include "lib/evidence.h"
#include "lib/fixture.h"
#include "lib/repro.h"

namespace sigwake {
namespace {

// `owner` as F_SETOWN takes it: our pid, or minus our process group.
void watermark_signal(Report& report, int setsig, pid_t owner) {
  SignalCapture sigio(SIGIO);  // first in, last out: outlives the event
  SwitchFixture f;  // its child leads a group of its own: never in ours
  f.event.request_signals(owner, setsig);

  const std::int64_t start = monotonic_ns();
  const short revents = f.trigger();
  const std::int64_t woken = monotonic_ns();
  const bool signalled = sigio.wait_for(1, Deadline(kSignalGrace));
  const std::int64_t decided = monotonic_ns();

  report.add("data_head", static_cast<long long>(f.ring.head()));
  const int records = add_record_evidence(report, f.ring.consume());
  add_poll_evidence(report, revents);
  add_signal_evidence(report, sigio);
  report.add("decided_after_us", static_cast<long long>((decided - start) / 1000));
  if (signalled) report.add("signal_after_poll_us", static_cast<long long>((sigio.deliveries()[0].at_ns - woken) / 1000));
  decide_watermark_signal(report, {records, (revents & POLLIN) != 0, sigio.count()}, "SWITCH records");
}

}  // namespace

SIGWAKE_CASE(watermark_sigio) { watermark_signal(report, SIGIO, getpid()); }
SIGWAKE_CASE(watermark_sigio_default_signal) { watermark_signal(report, 0, getpid()); }

SIGWAKE_CASE(watermark_sigio_process_group) {
  // A group of our own, so that the signal reaches nobody else (not whoever started us).
  check(setpgid(0, 0) == 0, "setpgid(0, 0)");
  report.add("owner_pgrp", static_cast<long long>(getpgrp()));
  watermark_signal(report, SIGIO, -getpgrp());
}

}  // namespace sigwake
