// Feature probe for rr: are context-switch records available? PERF_RECORD_SWITCH
// for a per-task event (context_switch, since 45ac1403f564, v4.3), and
// PERF_RECORD_SWITCH_CPU_WIDE for a CPU-wide one, which unprivileged users may
// only open at perf_event_paranoid <= 0. `delivered`: the records arrived;
// `no-record`: the event opened and the child switched, but none was written;
// a kernel that refuses the event is `unsupported`, with the errno.
#include <poll.h>
#include <unistd.h>

#include "lib/attrs.h"
#include "lib/budgets.h"
#include "lib/evidence.h"
#include "lib/process.h"
#include "lib/repro.h"

namespace sigwake {
namespace {

void probe(Report& report, pid_t pid, int cpu, std::uint32_t record_type, StoppedChild& child) {
  PerfEvent event = PerfEvent::open(switch_watermark_attr(1), pid, cpu);
  RingBuffer ring = RingBuffer::map(event.fd(), 0);
  event.enable();
  child.resume();
  wait_readable(event.fd(), kWakeupBudget);
  if (!child.ran(kWakeupBudget)) throw ReproError("the child never ran");

  const RecordRead read = ring.consume();
  int wanted = 0;
  for (const Record& record : read.records) wanted += record.type == record_type;
  add_record_evidence(report, read);
  report.add("wanted_records", static_cast<long long>(wanted));
  if (wanted > 0) return report.decide(Verdict::kDelivered);
  report.decide(Verdict::kNoRecord, std::string("the child switched, the event wrote no ") + record_type_name(record_type));
}

}  // namespace

SIGWAKE_CASE(switch_support_task) {
  pin_to_cpu(0);
  StoppedChild child;
  probe(report, child.pid(), -1, PERF_RECORD_SWITCH, child);
}

SIGWAKE_CASE(switch_support_cpu_wide) {
  pin_to_cpu(0);  // the child switches on CPU 0, which the event watches
  StoppedChild child;
  probe(report, -1, 0, PERF_RECORD_SWITCH_CPU_WIDE, child);
}

}  // namespace sigwake
