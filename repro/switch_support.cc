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

struct Probe {
  SwitchFixture::Scope scope;
  std::uint32_t record_type;
};

}  // namespace

SIGWAKE_VARIANT_CASE(switch_support, Probe) {
  const auto [scope, record_type] = variant;
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

SIGWAKE_VARIANT(switch_support, task, (Probe{SwitchFixture::Scope::kChild, PERF_RECORD_SWITCH}),
                {.expected = {changed_at("4.3", "45ac1403f564", Verdict::kUnsupported, Verdict::kDelivered,
                                         "context_switch and PERF_RECORD_SWITCH arrived with 45ac1403f564 (v4.3)")},
                 .shown = {"records"},
                 .kconfig = kPerfConfig});

// The child switches on CPU 0, which the event watches.
SIGWAKE_VARIANT(switch_support, cpu_wide, (Probe{SwitchFixture::Scope::kCpu0, PERF_RECORD_SWITCH_CPU_WIDE}),
                {.expected = {always(Verdict::kUnsupported,
                                     "a CPU-wide event needs CAP_PERFMON (or CAP_SYS_ADMIN) unless "
                                     "perf_event_paranoid <= 0: perf_allow_cpu() in include/linux/perf_event.h, "
                                     "checked by perf_event_open() (EACCES)")
                                  .in_passes(kUserPasses),
                              changed_at("4.3", "45ac1403f564", Verdict::kUnsupported, Verdict::kDelivered,
                                         "PERF_RECORD_SWITCH_CPU_WIDE arrived with 45ac1403f564 (v4.3)")},
                 .shown = {"records"},
                 .kconfig = kPerfConfig});

}  // namespace sigwake
