// Thread-directed delivery: F_SETOWN_EX with F_OWNER_TID names a thread other
// than the one whose activity writes the records; the handler must run on
// exactly that thread. Once through the sample-overflow path (which raises
// signals on every kernel) and once through the watermark path (since v6.10).
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include "lib/attrs.h"
#include "lib/budgets.h"
#include "lib/evidence.h"
#include "lib/process.h"
#include "lib/repro.h"
#include "lib/waiting_thread.h"

namespace sigwake {
namespace {

// Decides from where the deliveries landed: all on `owner`, or not.
void decide_thread(Report& report, const SignalCapture& capture, pid_t owner, bool wakeup_seen) {
  report.add("owner_tid", static_cast<long long>(owner));
  report.add("trigger_tid", static_cast<long long>(gettid()));
  add_signal_evidence(report, capture);
  int elsewhere = 0;
  for (const Delivery& d : capture.deliveries()) elsewhere += d.tid != owner;
  report.add("signals_on_other_threads", static_cast<long long>(elsewhere));
  if (capture.count() > 0 && elsewhere == 0) return report.decide(Verdict::kDelivered);
  if (capture.count() > 0) return report.decide(Verdict::kNotDelivered, "a signal ran on a thread F_OWNER_TID did not name");
  if (wakeup_seen) return report.decide(Verdict::kNotDelivered, "records written and POLLIN reported, no signal");
  report.decide(Verdict::kError, "no wakeup within the budget");
}

}  // namespace

SIGWAKE_CASE(setown_ex_tid_overflow) {
  SignalCapture sigio(SIGIO);
  PerfEvent event = PerfEvent::open(task_clock_sampling_attr(100'000), 0, -1);  // this thread's CPU time
  RingBuffer ring = RingBuffer::map(event.fd(), 0);
  WaitingThread owner(sigio, 1, kWakeupBudget);
  event.request_signals(owner.tid(), SIGIO, PerfEvent::Owner::kThread);
  event.enable();

  const Deadline deadline(kWakeupBudget);
  while (sigio.count() == 0 && !deadline.expired()) burn_cpu(1ms);  // blocked here: only the owner can take it
  event.disable();
  owner.stop();

  const int records = add_record_evidence(report, ring.consume());
  const short revents = wait_readable(event.fd(), 0ms);
  add_poll_evidence(report, revents);
  decide_thread(report, sigio, owner.tid(), records > 0 && (revents & POLLIN));
}

SIGWAKE_CASE(setown_ex_tid_watermark) {
  SignalCapture sigio(SIGIO);
  pin_to_cpu(0);  // the child, both threads, the records and their irq_work
  StoppedChild child;
  PerfEvent event = PerfEvent::open(switch_watermark_attr(1), child.pid(), -1);
  RingBuffer ring = RingBuffer::map(event.fd(), 0);
  WaitingThread owner(sigio, 1, kWakeupBudget);
  event.request_signals(owner.tid(), SIGIO, PerfEvent::Owner::kThread);
  event.enable();

  child.resume();
  const short revents = wait_readable(event.fd(), kWakeupBudget);
  owner.finish(kSignalGrace);  // blocked here: only the owner can take it

  const int records = add_record_evidence(report, ring.consume());
  add_poll_evidence(report, revents);
  decide_thread(report, sigio, owner.tid(), records > 0 && (revents & POLLIN));
}

}  // namespace sigwake
