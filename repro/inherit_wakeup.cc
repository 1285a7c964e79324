// An inherited event (inherit=1) opened, disabled, on a stopped task of ours.
// Resumed, the task forks a writer that stops at once, then stops itself; the
// writer carries the inherited child event. Only then is the event enabled
// (PERF_EVENT_IOC_ENABLE reaches the children) and only the writer resumed: the
// task the event was opened on writes nothing, so every record, wakeup and
// signal comes through the inherited child. perf_mmap() refuses a buffer for an
// inherited event that follows a task on every CPU (EINVAL), so the event counts
// on CPU 0 only, where everything is pinned.
//  - watermark: the writer's MMAP record crosses the watermark. perf_output_begin()
//    writes an inherited event's records as its parent, so this is the watermark
//    path of the parent event (signals since fd20bb51ed39, v6.10).
//  - overflow: the writer's task-clock samples overflow the child event; the ring
//    never wakes, so only __perf_event_overflow() on the child can signal, and
//    perf_event_fasync() sends that to the parent event's owner.
// On one CPU perf may swap equivalent contexts at a context switch
// (perf_event_context_sched_out), leaving the writer with the parent event
// itself (seen on a 16 KiB-page arm64 7.2 kernel in 1 run of 3, the swap done
// as the task stopped and the CPU went straight to the writer). So the task's
// context holds a non-inherited event when it forks: perf_event_init_context()
// then does not mark the writer's context a clone, and only clones are swapped
// (context_equiv()). And every record carries
// PERF_SAMPLE_STREAM_ID, the id of the event that wrote it: one written by the
// parent event (its PERF_EVENT_IOC_ID) is an error, as is one from the stopped task.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <functional>

#include "lib/attrs.h"
#include "lib/budgets.h"
#include "lib/decide.h"
#include "lib/evidence.h"
#include "lib/process.h"
#include "lib/repro.h"

namespace sigwake {
namespace {

struct Origins {
  int from_writer = 0, from_task = 0;
  int by_the_parent_event = 0;  // written by the event we opened, not by an inherited child
};

// Which task wrote each MMAP record or sample (the writer, or the task itself), and which event did.
Origins origins(const RecordRead& read, pid_t task, std::uint64_t parent_id) {
  Origins o;
  for (const Record& record : read.records) {
    std::optional<std::uint32_t> pid;
    if (const auto mmap = parse_mmap(record)) pid = mmap->pid;
    if (const auto sample = parse_ip_tid_sample(record)) pid = sample->pid;
    if (!pid) continue;
    (*pid == static_cast<std::uint32_t>(task) ? o.from_task : o.from_writer) += 1;
    o.by_the_parent_event += trailing_stream_id(record) == parent_id;
  }
  return o;
}

// Opens `attr` inherited on a task whose forked writer runs `write`; enables it
// once both are stopped and resumes the writer alone, then runs `meanwhile` on the ring.
// Returns what was seen. `settle` is how long poll() may take to report a
// wakeup that should come.
Seen observe(Report& report, const SignalCapture& sigio, perf_event_attr attr, unsigned ring_log2,
             std::chrono::milliseconds settle, const std::function<void()>& write,
             const std::function<void(const RingBuffer&)>& meanwhile = {}) {
  pin_to_cpu(0);
  int writer_pipe[2];
  check(pipe2(writer_pipe, O_CLOEXEC) == 0, "pipe2");
  StoppedChild task([&] {
    const pid_t writer = fork_stopped(write, false, writer_pipe[1]);
    (void)!::write(writer_pipe[1], &writer, sizeof writer);
  });
  close(writer_pipe[1]);
  attr.inherit = 1;
  attr.sample_type |= PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID;  // STREAM_ID last: trailing_stream_id()
  attr.sample_id_all = 1;
  PerfEvent event = PerfEvent::open(attr, task.pid(), 0);
  // Not inherited, never enabled: with it in the task's context at the fork, the writer's context is no clone.
  const PerfEvent no_clone = PerfEvent::open(mmap_watermark_attr(1), task.pid(), 0);
  event.request_signals(getpid(), SIGIO);
  RingBuffer ring = RingBuffer::map(event.fd(), ring_log2);

  task.resume();  // it forks the writer (disabled event: no FORK record), then stops
  pid_t writer = 0;
  if (!(wait_readable(writer_pipe[0], kWakeupBudget) & POLLIN) ||
      read(writer_pipe[0], &writer, sizeof writer) != sizeof writer || !task.ran(kWakeupBudget)) {
    throw ReproError("the task did not fork its writer");
  }
  event.enable();
  check(kill(writer, SIGCONT) == 0, "kill(writer, SIGCONT)");
  if (meanwhile) meanwhile(ring);
  // Asleep in poll() on the parent event while the writer runs on our CPU: only
  // a wakeup of the parent's waiters ends it early.
  const short revents = wait_readable(event.fd(), settle);
  const bool wrote = (wait_readable(writer_pipe[0], kWakeupBudget) & POLLIN) != 0;
  close(writer_pipe[0]);
  if (!wrote) throw ReproError("the writer never ran");
  sigio.wait_for(1, Deadline(kSignalGrace));

  const RecordRead read = ring.consume();
  const Origins o = origins(read, task.pid(), event.id());
  add_record_evidence(report, read);
  report.add("records_from_the_writer", static_cast<long long>(o.from_writer));
  report.add("records_from_the_task", static_cast<long long>(o.from_task));
  report.add("records_by_the_parent_event", static_cast<long long>(o.by_the_parent_event));
  add_poll_evidence(report, revents);
  add_signal_evidence(report, sigio);
  if (o.from_task > 0) throw ReproError("the stopped task wrote records: the inherited path is not isolated");
  if (o.by_the_parent_event > 0) {
    throw ReproError("the parent event wrote records (contexts swapped at a context switch): the inherited path "
                     "is not isolated");
  }
  return {o.from_writer, (revents & POLLIN) != 0, sigio.count()};
}

}  // namespace

SIGWAKE_CASE(inherit_wakeup_watermark, {.expected = {watermark_fix()}, .defining = kSiginfoEvidence, .shown = kShownSignal, .kconfig = kPerfConfig}) {
  SignalCapture sigio(SIGIO);
  const Seen seen = observe(report, sigio, mmap_watermark_attr(1), 0, kWakeupBudget, [] { const AnonymousPage page; });
  decide_watermark_signal(report, seen, "MMAP record from the inherited writer");
}

SIGWAKE_CASE(inherit_wakeup_overflow, {.expected = {always(Verdict::kDelivered,
                                     "an inherited child event's overflow signals through perf_event_fasync(), which "
                                     "returns the parent event's fasync list (kernel/events/core.c): the parent's "
                                     "owner gets the signal")},
              .defining = kSiginfoEvidence,
              .shown = kShownSignal,
              .kconfig = kPerfConfig}) {
  SignalCapture sigio(SIGIO);
  // The writer spends CPU time until we tell it to stop: once its first sample is
  // in the ring (then the signal has its grace), or a signal came. Its progress is
  // the measure, never the wall clock: under TCG on a loaded host a fixed spell of
  // wall time can pass without the writer's sample timer firing once. The ring's
  // watermark is its whole data area, which the kernel never fills (it keeps a
  // byte free), so the ring cannot wake us: only the overflow path signals.
  int stop[2];
  check(pipe2(stop, O_CLOEXEC) == 0, "pipe2");
  const Seen seen = observe(
      report, sigio, task_clock_overflow_attr(100'000, ring_data_bytes(kOverflowRingPagesLog2)), kOverflowRingPagesLog2,
      0ms,
      [&] {
        const Deadline guard(kWakeupBudget);  // only for a parent that never tells it (a hang)
        while (wait_readable(stop[0], 0ms) == 0 && !guard.expired()) burn_cpu(1ms);
      },
      [&](const RingBuffer& ring) {
        const Deadline deadline(kWakeupBudget);
        bool signalled = false;
        while (!signalled && ring.head() == 0 && !deadline.expired()) signalled = sigio.wait_for(1, Deadline(1ms));
        (void)!::write(stop[1], "!", 1);
      });
  close(stop[0]);
  close(stop[1]);
  decide_overflow_signal(report, seen);
}

}  // namespace sigwake
