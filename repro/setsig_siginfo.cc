// F_SETSIG with a real-time signal: the siginfo must say why (si_code POLL_IN),
// for which fd (si_fd), with which poll mask (si_band has POLLIN) and no error
// (si_errno 0, as send_sigio_to_task() sets it), and every other byte of the
// kernel's siginfo 0 (clear_siginfo(): no kernel memory in it); and
// real-time signals queue, one per wakeup, where SIGIO would merge them.
// Variants: the sample-overflow path (the ring never wakes, so only
// __perf_event_overflow() signals) and the watermark path.
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include "lib/budgets.h"
#include "lib/decide.h"
#include "lib/evidence.h"
#include "lib/process.h"
#include "lib/repro.h"
#include "lib/wakeup_path.h"

namespace sigwake {
namespace {

// Every delivery must carry the siginfo F_SETSIG promises for `fd`; returns
// true when it decided (misdelivered).
bool decided_by_siginfo(Report& report, const SignalCapture& capture, int fd) {
  add_signal_evidence(report, capture);
  int wrong = 0;
  for (const Delivery& d : capture.deliveries()) {
    wrong += d.code != POLL_IN || d.fd != fd || !(d.band & POLLIN) || d.error != 0 || d.stale_bytes;
  }
  report.add("deliveries_with_wrong_siginfo", static_cast<long long>(wrong));
  report.add("queued", capture.count() > 1);
  if (wrong == 0) return false;
  report.decide(Verdict::kMisdelivered, "a signal came without the siginfo F_SETSIG promises (POLL_IN, fd, POLLIN, "
                                               "si_errno 0, every other byte 0)");
  return true;
}

}  // namespace

SIGWAKE_VARIANT_CASE(setsig_siginfo, WakeupPath) {
  const int signo = SIGRTMIN + 2;
  SignalCapture capture(signo);
  // When the real-time signal queue is full, send_sigio_to_task() falls back to a plain SIGIO (fcntl(2)):
  // caught and counted, a fallback is evidence, never a killed program.
  SignalCapture fallback(SIGIO);
  WakeupFixture f(variant);
  f.event().request_signals(getpid(), signo);
  // Several signals while the signal is blocked: each overflow queues its own (three samples), each watermark
  // crossing too (switch-in, then switch-out as the child stops).
  f.trigger(3);
  capture.collect(kSignalGrace, kSettle);
  fallback.accept_pending();
  report.add("fallback_sigio", static_cast<long long>(fallback.count()));

  const int records = add_record_evidence(report, f.ring().consume());
  const short revents = f.revents();
  add_poll_evidence(report, revents);
  if (decided_by_siginfo(report, capture, f.event().fd())) return;
  f.decide(report, {records, (revents & POLLIN) != 0, capture.count()});
}

SIGWAKE_VARIANT(setsig_siginfo, overflow, WakeupPath::kOverflow,
                {.expected = {overflow_signal()},
                 .defining = kSiginfoEvidence + Words{"deliveries_with_wrong_siginfo"},
                 .shown = kShownSignal,
                 .kconfig = kPerfConfig});
SIGWAKE_VARIANT(setsig_siginfo, watermark, WakeupPath::kWatermark,
                {.expected = {watermark_fix()},
                 .defining = kSiginfoEvidence + Words{"deliveries_with_wrong_siginfo"},
                 .shown = kShownSignal,
                 .kconfig = kPerfConfig});

}  // namespace sigwake
