// A tracing program attached to a kprobe perf event (PERF_EVENT_IOC_SET_BPF)
// runs in the kprobe's handler, kprobe_perf_func() -> trace_call_bpf() in
// kernel/trace/trace_kprobe.c, once per hit; the sample it keeps (by returning
// 1) then goes through __perf_event_overflow() in kernel/events/core.c, which
// runs the event's program again only when it is a BPF_PROG_TYPE_PERF_EVENT
// program (100bff23818e "perf/bpf: Don't call bpf_overflow_handler() for
// tracing events"). Without that test a tracing program runs twice per sample,
// the second time with a perf_event context, and its return value there can
// drop the sample.
//  - bpf_kprobe_runs_once: a kprobe on the getppid() syscall, sampled every hit,
//    our own task only; the syscall runs kHits times: the program must have run
//    kHits times in our process, and the ring hold kHits samples.
#include <bpf/libbpf.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <fstream>
#include <string>

#include "bpf/kprobe_count.skel.h"
#include "lib/bpf_load.h"
#include "lib/evidence.h"
#include "lib/repro.h"

namespace sigwake {
namespace {

constexpr long long kHits = 4;
constexpr unsigned kRingPagesLog2 = 1;

#if defined(__x86_64__)
constexpr const char* kProbed = "__x64_sys_getppid";
#elif defined(__aarch64__)
constexpr const char* kProbed = "__arm64_sys_getppid";
#else
#error "bpf_kprobe knows the getppid() syscall's symbol on x86_64 and arm64 only"
#endif

// The kprobe PMU's type (perf_kprobe in kernel/events/core.c), as sysfs names it.
std::uint32_t kprobe_pmu_type() {
  std::uint32_t type = 0;
  if (!(std::ifstream("/sys/bus/event_source/devices/kprobe/type") >> type)) {
    throw Unsupported("the kernel has no kprobe PMU (/sys/bus/event_source/devices/kprobe: CONFIG_KPROBE_EVENTS)");
  }
  return type;
}

struct Counter {
  Skeleton<kprobe_count_bpf, kprobe_count_bpf__open, kprobe_count_bpf__load, kprobe_count_bpf__destroy> skeleton;

  explicit Counter(Report& report)
      : skeleton(report, BPF_PROG_TYPE_KPROBE,
                 [](kprobe_count_bpf& s) { s.rodata->target_tgid = static_cast<std::uint32_t>(getpid()); }) {}

  int prog_fd() const { return bpf_program__fd(skeleton->progs.count_run); }
  long long runs() const { return static_cast<long long>(__atomic_load_n(&skeleton->bss->runs, __ATOMIC_RELAXED)); }
};

}  // namespace

SIGWAKE_CASE(bpf_kprobe_runs_once,
             {.expected = {bpf_needs_privilege(),
                           always(Verdict::kMeasured,
                                  "kprobe_perf_func() in kernel/trace/trace_kprobe.c runs a kprobe event's program "
                                  "once per hit, and __perf_event_overflow() in kernel/events/core.c runs an "
                                  "event's program only when it is a perf_event program (100bff23818e \"perf/bpf: "
                                  "Don't call bpf_overflow_handler() for tracing events\", fixing f11f10bfa1ca; in "
                                  "6.1 a tracing program never was the overflow handler; Debian's changelogs of "
                                  "6.1, 6.12 and 7.2 name neither commit); known of Debian's kernels, which have "
                                  "the kprobe PMU (CONFIG_KPROBE_EVENTS): of another kernel's config nothing is known")
                               .of_origins({"debian"})},
              .defining = {"program_runs", "samples"},
              .shown = {"program_runs", "samples"},
              .kconfig = {"CONFIG_PERF_EVENTS", "CONFIG_BPF_SYSCALL", "CONFIG_BPF_EVENTS", "CONFIG_KPROBE_EVENTS"}}) {
  perf_event_attr plain = blank_attr(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY);
  plain.exclude_kernel = 1;
  PerfEvent::open(plain, 0, -1);  // perf closed to us whole says so first (unsupported, with its errno)
  const Counter counter(report);
  perf_event_attr attr = blank_attr(kprobe_pmu_type(), 0);
  attr.kprobe_func = reinterpret_cast<std::uint64_t>(kProbed);
  attr.sample_period = 1;
  attr.sample_type = PERF_SAMPLE_TID;
  attr.disabled = 1;
  OpenAttempt probe = PerfEvent::attempt(attr, 0, -1);
  if (!probe.event && probe.err == ENOENT) throw ReproError(std::string("no kprobe on ") + kProbed + ": ENOENT");
  const PerfEvent event = probe.event ? std::move(*probe.event) : PerfEvent::open(attr, 0, -1);
  RingBuffer ring = RingBuffer::map(event.fd(), kRingPagesLog2);
  check(ioctl(event.fd(), PERF_EVENT_IOC_SET_BPF, counter.prog_fd()) == 0, "PERF_EVENT_IOC_SET_BPF");

  event.enable();
  for (long long hit = 0; hit < kHits; ++hit) syscall(SYS_getppid);  // cannot fail
  event.disable();

  const RecordRead read = ring.consume();
  add_record_evidence(report, read);
  long long samples = 0;
  for (const Record& record : read.records) samples += record.type == PERF_RECORD_SAMPLE;
  const long long runs = counter.runs();
  report.add("hits", kHits);
  report.add("program_runs", runs);
  report.add("samples", samples);
  // The bug only adds runs (one more per sample kept). Fewer than the hits is no kernel verdict of this path:
  // the program skipped for recursion (bpf_prog_active held on our CPU), or our tgid is not the one it sees.
  if (runs < kHits) {
    throw ReproError(std::to_string(runs) + " program runs for " + std::to_string(kHits) + " hits: skipped for "
                     "recursion, or this process's pid is not the init namespace's the program compares");
  }
  if (runs > kHits) {
    return report.decide(Verdict::kWrongCount, std::to_string(runs) + " program runs for " + std::to_string(kHits) +
                                                   " hits and " + std::to_string(samples) + " samples: the overflow "
                                                   "ran the tracing program again");
  }
  if (samples != kHits) {
    return report.decide(Verdict::kWrongCount, std::to_string(samples) + " samples for " + std::to_string(kHits) +
                                                   " hits the program kept (not this fix's path: the kprobe's own "
                                                   "sample output)");
  }
  report.decide(Verdict::kMeasured, "one program run and one sample per hit");
}

}  // namespace sigwake
