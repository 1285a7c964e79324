// Sample throttling within a tick. __perf_event_account_interrupt() in
// kernel/events/core.c counts a sampling event's overflows per tick and, at
// max_samples_per_tick (perf_event_max_sample_rate / HZ, rounded up),
// throttles it: it writes PERF_RECORD_THROTTLE and the event samples no more
// until a tick unthrottles it (PERF_RECORD_UNTHROTTLE). With the rate lowered
// to 1 a second the limit is 1: the first overflow of each unthrottled stretch
// is the one that throttles. Before f51972e6f8b9 the first overflow of a tick
// was never checked and later ones only past the limit, so one sample more
// passed each tick before PERF_RECORD_THROTTLE (and a timer firing once a tick
// or less was never throttled at all).
//  - sample_throttle_per_tick: a task-clock event sampling every 10 us (the
//    hrtimer overflow, which passes throttle=1) while we spin for 100 ms; no
//    stretch may write a sample before its THROTTLE record. The sample of the
//    throttling overflow itself, written after the record, is shown, not judged.
#include <unistd.h>

#include <algorithm>

#include "lib/attrs.h"
#include "lib/process.h"
#include "lib/repro.h"
#include "lib/sysctl.h"

namespace sigwake {
namespace {

constexpr char kSampleRate[] = "kernel/perf_event_max_sample_rate";  // refused while throttling is off
constexpr std::uint64_t kPeriodNs = 10'000;  // the shortest period perf_swevent_start_hrtimer() arms
constexpr auto kSpin = 100ms;                // 10 ticks or more at any HZ Debian builds

// The samples of each throttled stretch (from the start or an UNTHROTTLE to the next UNTHROTTLE or the end),
// those written before its THROTTLE record and all of them.
struct Stretches {
  int throttles = 0, samples = 0;
  int most_before_throttle = 0, most_in_a_stretch = 0;
};

Stretches stretches_of(const RecordRead& read) {
  Stretches s;
  int before = 0, in_stretch = 0;
  bool throttled = false;
  const auto close_stretch = [&] {
    if (throttled) s.most_in_a_stretch = std::max(s.most_in_a_stretch, in_stretch);
    before = in_stretch = 0;
    throttled = false;
  };
  for (const Record& r : read.records) {
    if (r.type == PERF_RECORD_SAMPLE) {
      ++s.samples, ++in_stretch;
      before += !throttled;
    } else if (r.type == PERF_RECORD_THROTTLE && !throttled) {
      ++s.throttles;
      throttled = true;
      s.most_before_throttle = std::max(s.most_before_throttle, before);
    } else if (r.type == PERF_RECORD_UNTHROTTLE) {
      close_stretch();
    }
  }
  close_stretch();
  return s;
}

}  // namespace

SIGWAKE_CASE(sample_throttle_per_tick,
             {.expected = {root_writes("perf_event_max_sample_rate"),
                           booted_machine_only("perf_event_max_sample_rate"),
                           changed_at("6.16", "f51972e6f8b9", Verdict::kWrongCount, Verdict::kMeasured,
                                      "f51972e6f8b9 \"perf/core: Fix broken throttling when "
                                      "max_samples_per_tick=1\" (v6.16; in the stable review series of 17 and 23 "
                                      "June 2025: 6.15.3, 6.12.34, 6.6.94, 6.1.142, 5.15.186, 5.10.239, "
                                      "5.4.295): "
                                      "__perf_event_account_interrupt() in kernel/events/core.c throttles at the "
                                      "overflow that reaches max_samples_per_tick, the first of a tick included; "
                                      "before, the first was never checked and the rest with '>', one sample more "
                                      "per tick")
                               .backported({"6.15.3", "6.12.34", "6.6.94", "6.1.142", "5.15.186", "5.10.239",
                                            "5.4.295"})},
              .defining = {"most_samples_before_throttle"},
              .shown = {"throttles", "most_samples_before_throttle"},
              .kconfig = kPerfConfig}) {
  perf_event_attr attr = task_clock_overflow_attr(kPeriodNs, 1u << (12 + kOverflowRingPagesLog2));
  const PerfEvent event = PerfEvent::open(attr, 0, -1);
  RingBuffer ring = RingBuffer::map(event.fd(), kOverflowRingPagesLog2);
  if (!in_sigwake_guest()) throw Unsupported("changes perf_event_max_sample_rate machine-wide: only on a machine "
                                             "sigwake booted");
  {
    const SysctlFor one_a_second(kSampleRate, 1);  // max_samples_per_tick = DIV_ROUND_UP(1, HZ) = 1
    event.enable();
    burn_cpu(kSpin);
    event.disable();
  }
  const RecordRead read = ring.consume();
  if (read.truncated) throw ReproError("the ring held a truncated record");
  const Stretches s = stretches_of(read);
  report.add("samples", static_cast<long long>(s.samples));
  report.add("throttles", static_cast<long long>(s.throttles));
  report.add("most_samples_before_throttle", static_cast<long long>(s.most_before_throttle));
  report.add("most_samples_in_a_stretch", static_cast<long long>(s.most_in_a_stretch));
  if (s.samples == 0) return report.decide(Verdict::kNoRecord, "100 ms of task-clock, no sample written");
  if (s.throttles == 0) {
    return report.decide(Verdict::kWrongCount, std::to_string(s.samples) + " samples and never throttled at "
                                                "perf_event_max_sample_rate 1");
  }
  if (s.most_before_throttle > 0) {
    return report.decide(Verdict::kWrongCount, std::to_string(s.most_before_throttle) + " sample(s) passed "
                                               "before a THROTTLE record where the limit is one a tick");
  }
  report.decide(Verdict::kMeasured, "each stretch throttled at its first overflow");
}

}  // namespace sigwake
