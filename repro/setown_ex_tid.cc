// Thread-directed delivery: F_SETOWN_EX with F_OWNER_TID names an owner thread
// that keeps the signal blocked while the trigger runs, and the main thread has
// it unblocked (a decoy). A signal sent to the owner waits on it and runs there
// once it takes it; a kernel that treats F_OWNER_TID like F_OWNER_PID queues a
// process-wide signal, which the decoy takes: misdelivered. Variants: the
// sample-overflow path (signals on every kernel) and the watermark path (since
// v6.10). setown_ex_pgrp: F_SETOWN_EX with F_OWNER_PGRP names our process
// group, read back as F_OWNER_PGRP by F_GETOWN_EX (f_setown_ex() keeps
// PIDTYPE_PGID; a kernel that kept another type reads back F_OWNER_PID:
// misdelivered), and the overflow's SIGIO reaches us and the group's other
// member (a witness child): one sent to us alone is misdelivered.
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include "lib/budgets.h"
#include "lib/decide.h"
#include "lib/evidence.h"
#include "lib/owner_thread.h"
#include "lib/process.h"
#include "lib/repro.h"
#include "lib/wakeup_path.h"

namespace sigwake {
namespace {

// Where the deliveries landed: all on `owner`, or misdelivered. Returns true
// when it decided.
bool decided_by_thread(Report& report, const SignalCapture& capture, pid_t owner) {
  report.add("owner_tid", static_cast<long long>(owner));
  report.add("decoy_tid", static_cast<long long>(gettid()));
  int elsewhere = 0;
  for (const Delivery& d : capture.deliveries()) elsewhere += d.tid != owner;
  report.add("signals_on_other_threads", static_cast<long long>(elsewhere));
  if (elsewhere == 0) return false;
  report.decide(Verdict::kMisdelivered, "a signal ran on a thread F_OWNER_TID did not name");
  return true;
}

}  // namespace

SIGWAKE_VARIANT_CASE(setown_ex_tid, WakeupPath) {
  SignalCapture sigio(SIGIO);
  WakeupFixture f(variant);  // the watermark path pins: the child, both threads, the records and their irq_work
  OwnerThread owner(sigio);
  f.event().request_signals(owner.tid(), SIGIO, PerfEvent::Owner::kThread);
  {
    const SignalCapture::Unblocked decoy(sigio);
    f.trigger();
    sigio.wait_for(1, Deadline(kSignalGrace));  // only a misdirected signal can end this early
  }
  owner.take();

  const int records = add_record_evidence(report, f.ring().consume());
  const short revents = f.revents();
  add_poll_evidence(report, revents);
  add_signal_evidence(report, sigio);
  if (decided_by_thread(report, sigio, owner.tid())) return;
  f.decide(report, {records, (revents & POLLIN) != 0, sigio.count()});
}

SIGWAKE_VARIANT(setown_ex_tid, overflow, WakeupPath::kOverflow,
                {.expected = {overflow_signal()},
                 .defining = kSiginfoEvidence + Words{"signals_on_other_threads"},
                 .shown = kShownSignal,
                 .kconfig = kPerfConfig});
SIGWAKE_VARIANT(setown_ex_tid, watermark, WakeupPath::kWatermark,
                {.expected = {watermark_fix()},
                 .defining = kSiginfoEvidence + Words{"signals_on_other_threads"},
                 .shown = kShownSignal,
                 .kconfig = kPerfConfig});

SIGWAKE_CASE(setown_ex_pgrp, {.expected = {overflow_signal()},
                              .defining = kSiginfoEvidence + Words{"group_member_signalled"},
                              .shown = kShownSignal,
                              .kconfig = kPerfConfig}) {
  // A group of our own: SIGIO goes to every member, and whoever started us (a test runner) must not be one.
  if (getpgrp() != getpid()) check(setpgid(0, 0) == 0, "setpgid(0, 0)");  // a session leader leads its group
  SignalCapture sigio(SIGIO);
  SignalWitness member(SIGIO);  // the group's other member: a signal sent to us alone never reaches it
  WakeupFixture f(WakeupPath::kOverflow);
  f.event().request_signals(getpgrp(), SIGIO, PerfEvent::Owner::kGroup);  // read back: misdelivered if not PGRP
  {
    const SignalCapture::Unblocked here(sigio);
    f.trigger();
    sigio.wait_for(1, Deadline(kSignalGrace));
  }
  const bool member_signalled = member.received();
  report.add("group_member_signalled", member_signalled);
  const int records = add_record_evidence(report, f.ring().consume());
  const short revents = f.revents();
  add_poll_evidence(report, revents);
  add_signal_evidence(report, sigio);
  if (sigio.count() > 0 && !member_signalled) {
    return report.decide(Verdict::kMisdelivered, "SIGIO reached us but not our group's other member");
  }
  f.decide(report, {records, (revents & POLLIN) != 0, sigio.count()});
}

}  // namespace sigwake
