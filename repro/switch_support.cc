// Feature probe for rr: are context-switch records available? PERF_RECORD_SWITCH
// for a per-task event (context_switch, since 45ac1403f564, v4.3), and
// PERF_RECORD_SWITCH_CPU_WIDE for a CPU-wide one, which unprivileged users may
// only open at perf_event_paranoid <= 0. `delivered`: the records arrived;
// `no-record`: the event opened and the child switched, but none was written;
// a kernel that refuses the event is `unsupported`, with the errno.
#include <poll.h>
#include <unistd.h>

#include "lib/evidence.h"
#include "lib/fixture.h"
#include "lib/repro.h"

namespace sigwake {
namespace {

void probe(Report& report, SwitchFixture::Scope scope, std::uint32_t record_type) {
  SwitchFixture f(switch_watermark_attr(1), scope);
  f.trigger();
  const RecordRead read = f.ring.consume();
  int wanted = 0, outs = 0;
  for (const Record& record : read.records) {
    if (record.type != record_type) continue;
    ++wanted;
    outs += (record.misc & PERF_RECORD_MISC_SWITCH_OUT) != 0;
  }
  add_record_evidence(report, read);
  report.add("wanted_records", static_cast<long long>(wanted));
  report.add("switch_out_records", static_cast<long long>(outs));
  // The child switched in and out: both kinds must be there, told apart by PERF_RECORD_MISC_SWITCH_OUT.
  if (wanted > 0 && (outs == 0 || outs == wanted)) {
    return report.decide(Verdict::kWrongCount, std::to_string(outs) + " of " + std::to_string(wanted) +
                                                   " records marked PERF_RECORD_MISC_SWITCH_OUT: in and out not told apart");
  }
  if (wanted > 0) return report.decide(Verdict::kDelivered);
  report.decide(Verdict::kNoRecord, std::string("the child switched, the event wrote no ") + record_type_name(record_type));
}

}  // namespace

SIGWAKE_CASE(switch_support_task) { probe(report, SwitchFixture::Scope::kChild, PERF_RECORD_SWITCH); }

// The child switches on CPU 0, which the event watches.
SIGWAKE_CASE(switch_support_cpu_wide) { probe(report, SwitchFixture::Scope::kCpu0, PERF_RECORD_SWITCH_CPU_WIDE); }

}  // namespace sigwake
