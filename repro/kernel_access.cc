// Events that read the kernel need kernel access even when they count user space
// only (exclude_kernel): perf_event_open() in kernel/events/core.c asks
// perf_allow_kernel(), which refuses (EACCES) at perf_event_paranoid 2 and above
// without CAP_PERFMON or CAP_SYS_ADMIN.
//  - kernel_access_text_poke: text_poke=1 asks for PERF_RECORD_TEXT_POKE, the
//    kernel's own code as it is changed.
//  - kernel_access_callchain: PERF_SAMPLE_CALLCHAIN without
//    exclude_callchain_kernel asks for kernel stacks.
// Each must open where kernel access is allowed and be refused where it is not.
// A plain user-space event opened first is the control: where that is refused
// too, perf is closed to us whole, and the case says nothing (unsupported).
#include <linux/capability.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

#include "lib/capabilities.h"
#include "lib/repro.h"

namespace sigwake {
namespace {

perf_event_attr user_only_attr() {
  perf_event_attr attr = blank_attr(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);
  attr.disabled = 1;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  return attr;
}

void decide_kernel_access(Report& report, const perf_event_attr& attr, const std::string& what) {
  const PerfEvent control = PerfEvent::open(user_only_attr(), 0, -1);  // Unsupported where perf is closed to us
  int paranoid = 99;
  std::ifstream("/proc/sys/kernel/perf_event_paranoid") >> paranoid;
  if (paranoid == 99) throw ReproError("cannot read /proc/sys/kernel/perf_event_paranoid");
  const bool allowed = paranoid <= 1 || has_effective(CAP_PERFMON) || has_effective(CAP_SYS_ADMIN);
  const OpenAttempt got = PerfEvent::attempt(attr, 0, -1);
  report.add("perf_event_paranoid", static_cast<long long>(paranoid));
  report.add("kernel_access", allowed);
  report.add("opened", std::string(got.event ? "yes" : strerrorname_np(got.err)));
  if (got.event && !allowed) {
    return report.decide(Verdict::kMisdelivered, what + " opened at perf_event_paranoid " + std::to_string(paranoid) +
                                                     " without CAP_PERFMON, where perf_allow_kernel() refuses it");
  }
  if (got.event) return report.decide(Verdict::kMeasured, what + " opened with kernel access");
  if (got.err != EACCES) throw Unsupported("perf_event_open(" + what + "): " + explain_open_errno(got.err));
  if (allowed) return report.decide(Verdict::kMisdelivered, what + " refused (EACCES) with kernel access allowed");
  report.decide(Verdict::kMeasured, what + " refused (EACCES) without kernel access");
}

constexpr const char* kAllowKernel =
    "perf_event_open() in kernel/events/core.c asks perf_allow_kernel() for it, which refuses (EACCES) at "
    "perf_event_paranoid 2 and above without CAP_PERFMON; where access is allowed it opens";

}  // namespace

SIGWAKE_CASE(kernel_access_text_poke,
             {.expected = {fixed_by("357e8a77a501", Verdict::kMisdelivered, Verdict::kMeasured,
                                    std::string("357e8a77a501 \"perf: Require kernel access for text poke events\" "
                                                "(stable 6.1.191, 6.12.113 and 7.2.10, as Debian's changelogs place it; its "
                                                "upstream release is not confirmed here): ") + kAllowKernel)
                               .backported({"6.1.191", "6.12.113", "7.2.10"})},
              .defining = {"opened"},
              .shown = {"opened"},
              .kconfig = kPerfConfig}) {
  perf_event_attr attr = user_only_attr();
  attr.text_poke = 1;
  decide_kernel_access(report, attr, "a text_poke event");
}

SIGWAKE_CASE(kernel_access_callchain,
             {.expected = {fixed_by("", Verdict::kMisdelivered, Verdict::kMeasured,
                                    std::string("\"perf/core: Check kernel access when kernel callchains are "
                                                "requested\" (stable 6.12.113 and 7.2.10, as Debian's changelogs place it; "
                                                "not in 6.1.192; its upstream commit is not confirmed here): ") +
                                        kAllowKernel)
                               .backported({"6.12.113", "7.2.10"})},
              .defining = {"opened"},
              .shown = {"opened"},
              .kconfig = kPerfConfig}) {
  perf_event_attr attr = user_only_attr();
  attr.sample_period = 1000000;
  attr.sample_type = PERF_SAMPLE_CALLCHAIN;  // exclude_callchain_kernel left 0: kernel stacks too
  decide_kernel_access(report, attr, "a sampling event asking kernel callchains");
}

}  // namespace sigwake
