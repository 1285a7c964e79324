// rr's case: does a ring-buffer watermark wakeup raise SIGIO on a FASYNC perf fd?
// Fixed upstream by fd20bb51ed39 "perf/ring_buffer: Trigger IO signals for
// watermark_wakeup" (v6.10); before it, perf_output_wakeup() woke poll() only.
//  - watermark_sigio: F_SETSIG names SIGIO, so send_sigio_to_task() takes its
//    siginfo path (si_code POLL_IN). (What an exit after it brings is
//    exit_wakeup_sigio's.)
//  - watermark_sigio_default_signal: no F_SETSIG (owner signum 0, as rr does),
//    so the kernel's default path sends a plain SIGIO (si_code SI_KERNEL).
//  - watermark_sigio_process_group: F_SETOWN with a negative id, our own process
//    group: send_sigio() walks the group's tasks instead of naming one, so a
//    second member of the group (a forked witness) must get the signal too.
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>

#include "lib/decide.h"
#include "lib/evidence.h"
#include "lib/fixture.h"
#include "lib/process.h"
#include "lib/repro.h"

namespace sigwake {
namespace {

// `owner` as F_SETOWN takes it: our pid, or minus our process group. Returns what was seen.
Seen watermark_signal(Report& report, int setsig, pid_t owner) {
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
  return {records, (revents & POLLIN) != 0, sigio.count()};
}

}  // namespace

SIGWAKE_CASE(watermark_sigio, {.expected = {watermark_fix()}, .defining = kSiginfoEvidence, .shown = kShownSignal,
                                .kconfig = kPerfConfig, .peers = {"watermark_signal"}}) {
  decide_watermark_signal(report, watermark_signal(report, SIGIO, getpid()), "SWITCH records");
}

SIGWAKE_CASE(watermark_sigio_default_signal, {.expected = {watermark_fix()}, .defining = kSiginfoEvidence, .shown = kShownSignal, .kconfig = kPerfConfig}) {
  decide_watermark_signal(report, watermark_signal(report, 0, getpid()), "SWITCH records");
}

SIGWAKE_CASE(watermark_sigio_process_group, {.expected = {watermark_fix()}, .defining = kSiginfoEvidence, .shown = kShownSignal, .kconfig = kPerfConfig}) {
  // A group of our own, so that the signal reaches nobody else (not whoever started us), with a second
  // member: a signal sent to the group reaches every member, not only its leader.
  check(setpgid(0, 0) == 0, "setpgid(0, 0)");
  report.add("owner_pgrp", static_cast<long long>(getpgrp()));
  SignalWitness member(SIGIO);
  const Seen seen = watermark_signal(report, SIGIO, -getpgrp());
  const bool reached = seen.signals > 0 && member.received();
  report.add("member_signalled", reached);
  if (seen.signals > 0 && !reached) {
    return report.decide(Verdict::kMisdelivered, "we got the group's signal, the group's other member did not");
  }
  decide_watermark_signal(report, seen, "SWITCH records");
}

}  // namespace sigwake
