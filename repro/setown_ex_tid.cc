// Thread-directed delivery: F_SETOWN_EX with F_OWNER_TID names an owner thread
// that keeps the signal blocked while the trigger runs, and the main thread has
// it unblocked (a decoy). A signal sent to the owner waits on it and runs there
// once it takes it; a kernel that treats F_OWNER_TID like F_OWNER_PID queues a
// process-wide signal, which the decoy takes: misdelivered. Once through the
// sample-overflow path (signals on every kernel) and once through the watermark
// path (since v6.10).
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include "lib/attrs.h"
#include "lib/budgets.h"
#include "lib/decide.h"
#include "lib/evidence.h"
#include "lib/fixture.h"
#include "lib/owner_thread.h"
#include "lib/process.h"
#include "lib/repro.h"

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

SIGWAKE_CASE(setown_ex_tid_overflow) {
  SignalCapture sigio(SIGIO);
  PerfEvent event =  // this thread's CPU time
      PerfEvent::open(task_clock_overflow_attr(100'000, ring_data_bytes(kOverflowRingPagesLog2)), 0, -1);
  RingBuffer ring = RingBuffer::map(event.fd(), kOverflowRingPagesLog2);
  OwnerThread owner(sigio);
  event.request_signals(owner.tid(), SIGIO, PerfEvent::Owner::kThread);
  {
    const SignalCapture::Unblocked decoy(sigio);
    event.enable();
    const Deadline deadline(kWakeupBudget);
    while (ring.head() == 0 && !deadline.expired()) burn_cpu(1ms);
    event.disable();
    sigio.wait_for(1, Deadline(kSignalGrace));  // only a misdirected signal can end this early
  }
  owner.take();

  const int records = add_record_evidence(report, ring.consume());
  const short revents = wait_readable(event.fd(), 0ms);
  add_poll_evidence(report, revents);
  add_signal_evidence(report, sigio);
  if (decided_by_thread(report, sigio, owner.tid())) return;
  decide_overflow_signal(report, {records, (revents & POLLIN) != 0, sigio.count()});
}

SIGWAKE_CASE(setown_ex_tid_watermark) {
  SignalCapture sigio(SIGIO);
  SwitchFixture f;  // pinned: the child, both threads, the records and their irq_work
  OwnerThread owner(sigio);
  f.event.request_signals(owner.tid(), SIGIO, PerfEvent::Owner::kThread);
  short revents = 0;
  {
    const SignalCapture::Unblocked decoy(sigio);
    revents = f.trigger();
    sigio.wait_for(1, Deadline(kSignalGrace));  // only a misdirected signal can end this early
  }
  owner.take();

  const int records = add_record_evidence(report, f.ring.consume());
  add_poll_evidence(report, revents);
  add_signal_evidence(report, sigio);
  if (decided_by_thread(report, sigio, owner.tid())) return;
  decide_watermark_signal(report, {records, (revents & POLLIN) != 0, sigio.count()}, "SWITCH records");
}

}  // namespace sigwake
