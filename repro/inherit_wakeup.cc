// An inherited event (inherit=1) opened on a task whose child writes the
// records: the parent event's fd must be woken and signalled. The task is a
// stopped child of ours; resumed, it forks the writer and stops. perf_mmap()
// refuses a buffer for an inherited event that follows a task on every CPU
// (EINVAL), so the event counts on CPU 0 only, where everything is pinned.
//  - watermark: the writer's MMAP record crosses the watermark. perf_output_begin()
//    writes an inherited event's records as its parent, so this is the watermark
//    path of the parent event (signals since fd20bb51ed39, v6.10).
//  - overflow: the writer's task-clock samples overflow the inherited event.
//    perf_event_fasync() has always signalled the parent's owner; poll() on the
//    parent is woken since 961c39121759 "perf: Always wake the parent event" (v5.17).
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include "lib/attrs.h"
#include "lib/budgets.h"
#include "lib/evidence.h"
#include "lib/process.h"
#include "lib/repro.h"

namespace sigwake {
namespace {

// Counts the records the writer (not the task the event was opened on) wrote.
int records_from_children(Report& report, const RecordRead& read, pid_t task) {
  int from_children = 0;
  for (const Record& record : read.records) {
    if (const auto mmap = parse_mmap(record)) from_children += mmap->pid != static_cast<std::uint32_t>(task);
    if (const auto sample = parse_ip_tid_sample(record)) from_children += sample->pid != static_cast<std::uint32_t>(task);
  }
  add_record_evidence(report, read);
  report.add("records_from_the_child", static_cast<long long>(from_children));
  return from_children;
}

void decide(Report& report, const SignalCapture& sigio, int from_children, short revents) {
  add_poll_evidence(report, revents);
  add_signal_evidence(report, sigio);
  if (sigio.count() > 0) return report.decide(Verdict::kDelivered);
  if (from_children > 0 && (revents & POLLIN)) {
    return report.decide(Verdict::kNotDelivered, "the child's records reached the parent's buffer, POLLIN, no SIGIO");
  }
  if (from_children > 0) return report.decide(Verdict::kNotDelivered, "the child's records arrived; no POLLIN, no SIGIO");
  report.decide(Verdict::kError, "no record from the child within the budget");
}

// Opens `attr` inherited on `task` (CPU 0), resumes it and watches the parent event's fd.
void observe(Report& report, const SignalCapture& sigio, perf_event_attr attr, const StoppedChild& task) {
  attr.inherit = 1;
  PerfEvent event = PerfEvent::open(attr, task.pid(), 0);
  event.request_signals(getpid(), SIGIO);
  RingBuffer ring = RingBuffer::map(event.fd(), 0);
  event.enable();

  task.resume();
  const short revents = wait_readable(event.fd(), kWakeupBudget);
  sigio.wait_for(1, Deadline(kSignalGrace));
  decide(report, sigio, records_from_children(report, ring.consume(), task.pid()), revents);
}

}  // namespace

SIGWAKE_CASE(inherit_wakeup_watermark) {
  SignalCapture sigio(SIGIO);
  pin_to_cpu(0);
  StoppedChild task([] { fork_and_stop([] { const AnonymousPage page; }); });
  observe(report, sigio, mmap_watermark_attr(1), task);
}

SIGWAKE_CASE(inherit_wakeup_overflow) {
  SignalCapture sigio(SIGIO);
  pin_to_cpu(0);
  StoppedChild task([] { fork_and_stop([] { burn_cpu(20ms); }); });
  observe(report, sigio, task_clock_sampling_attr(100'000), task);
}

}  // namespace sigwake
