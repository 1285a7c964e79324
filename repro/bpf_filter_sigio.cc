// A BPF program attached to a sampling event (PERF_EVENT_IOC_SET_BPF) decides
// whether an overflow counts; one that returns 0 rejects the sample. Since
// c4fcc7d1f415 "perf/bpf: Allow a BPF program to suppress all sample side
// effects" (v6.10) __perf_event_overflow() runs the program before it sets
// pending_kill, so a rejected overflow writes no sample and raises no signal
// (`not-delivered` is right). Before, the program only replaced the output: the
// signal still came for samples it rejected (`misdelivered`).
#include <bpf/libbpf.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "bpf/perf_filter.skel.h"
#include "lib/attrs.h"
#include "lib/bpf_load.h"
#include "lib/budgets.h"
#include "lib/evidence.h"
#include "lib/process.h"
#include "lib/repro.h"

namespace sigwake {
namespace {

constexpr std::uint64_t kPeriodNs = 100'000;
constexpr std::uint64_t kRejections = 3;  // overflows the program must have rejected before we judge

struct Filter {
  Skeleton<perf_filter_bpf, perf_filter_bpf__open, perf_filter_bpf__load, perf_filter_bpf__destroy> skeleton;

  explicit Filter(Report& report) : skeleton(report, BPF_PROG_TYPE_PERF_EVENT) {}

  int prog_fd() const { return bpf_program__fd(skeleton->progs.reject); }
  std::uint64_t runs() const { return __atomic_load_n(&skeleton->bss->runs, __ATOMIC_RELAXED); }
};

}  // namespace

SIGWAKE_CASE(bpf_filter_sigio, {.expected = {bpf_needs_privilege(),
                           changed_at("6.10", "c4fcc7d1f415", Verdict::kMisdelivered, Verdict::kNotDelivered,
                                      "c4fcc7d1f415 \"perf/bpf: Allow a BPF program to suppress all sample side "
                                      "effects\" (v6.10): __perf_event_overflow() in kernel/events/core.c runs a "
                                      "PERF_EVENT_IOC_SET_BPF program before it sets pending_kill, and a program "
                                      "returning 0 ends the overflow there; before, the program replaced only the "
                                      "overflow handler (the output) and the signal still came")},
              .defining = kSiginfoEvidence,
              .shown = kShownSignal,
              .kconfig = kBpfConfig}) {
  SignalCapture sigio(SIGIO);
  const Filter filter(report);
  PerfEvent event =
      PerfEvent::open(task_clock_overflow_attr(kPeriodNs, ring_data_bytes(kOverflowRingPagesLog2)), 0, -1);
  event.request_signals(getpid(), SIGIO);
  RingBuffer ring = RingBuffer::map(event.fd(), kOverflowRingPagesLog2);
  check(ioctl(event.fd(), PERF_EVENT_IOC_SET_BPF, filter.prog_fd()) == 0, "PERF_EVENT_IOC_SET_BPF");

  event.enable();
  const Deadline deadline(kWakeupBudget);
  while (filter.runs() < kRejections && !deadline.expired()) burn_cpu(1ms);
  event.disable();
  sigio.collect(kSignalGrace, kSettle);

  const int records = add_record_evidence(report, ring.consume());
  report.add("filter_runs", static_cast<long long>(filter.runs()));
  add_signal_evidence(report, sigio);
  if (filter.runs() == 0) return report.decide(Verdict::kNoRecord, "our CPU time ran, the filter never saw an overflow");
  if (records > 0) {
    return report.decide(Verdict::kMisdelivered, std::to_string(records) + " samples written though the program "
                                                                            "rejected every overflow");
  }
  if (sigio.count() > 0) return report.decide(Verdict::kMisdelivered, "a signal for overflows the program rejected");
  report.decide(Verdict::kNotDelivered, "the program rejected " + std::to_string(filter.runs()) +
                                            " overflows: no sample, no signal");
}

}  // namespace sigwake
