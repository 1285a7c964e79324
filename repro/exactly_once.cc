// Counting at the watermark; the signal is real-time, so every send is queued
// and counted rather than merged.
//  - exactly_once: a burst of 8 crossings (each anonymous mmap writes one
//    PERF_RECORD_MMAP past a 1-byte watermark): one signal each, no more.
//  - watermark_threshold: the watermark is a threshold, not "any record": set
//    between two and three records' bytes, the first two records raise nothing,
//    the third crosses it: POLLIN and one signal, then.
//  - watermark_threshold_default: with no watermark asked for (watermark=0,
//    wakeup_events=0) ring_buffer_init() wakes at half the data area: records one
//    at a time, the first POLLIN comes with the record that takes data_head past
//    the half, not before, not after.
//  - watermark_threshold_default_samples: the same with samples (a page-fault
//    event, period 1), which perf_output_sample() writes: with wakeup_events 0
//    it must not count them toward a wakeup of its own.
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <optional>

#include "lib/attrs.h"
#include "lib/budgets.h"
#include "lib/decide.h"
#include "lib/evidence.h"
#include "lib/process.h"
#include "lib/repro.h"

namespace sigwake {

SIGWAKE_CASE(exactly_once, {.expected = {watermark_fix()},
              .defining = kSiginfoEvidence + Words{"crossings"},
              .shown = kShownSignal + Words{"crossings"},
              .kconfig = kPerfConfig}) {
  constexpr int kCrossings = 8;
  const int signo = SIGRTMIN + 5;
  SignalCapture capture(signo);
  PerfEvent event = PerfEvent::open(mmap_watermark_attr(1), 0, -1);
  event.request_signals(gettid(), signo, PerfEvent::Owner::kThread);
  RingBuffer ring = RingBuffer::map(event.fd(), 3);  // room for the whole burst
  std::optional<AnonymousPage> pages[kCrossings];    // no allocation in the burst: brk writes records too

  event.enable();
  for (auto& page : pages) page.emplace();
  event.disable();
  const short revents = wait_readable(event.fd(), kWakeupBudget);
  capture.collect(kSignalGrace, kSettle);

  int crossings = 0;
  const RecordRead read = ring.consume();
  for (const auto& page : pages) crossings += count_mmaps_of(read, page->address());
  add_record_evidence(report, read);
  report.add("crossings", static_cast<long long>(crossings));
  add_poll_evidence(report, revents);
  add_signal_evidence(report, capture);
  char ratio[32];
  std::snprintf(ratio, sizeof ratio, "%.2f", crossings ? static_cast<double>(capture.count()) / crossings : 0.0);
  report.add("signals_per_crossing", ratio);

  if (crossings != kCrossings) {
    return report.decide(Verdict::kNoRecord, std::to_string(crossings) + " MMAP records for " +
                                                 std::to_string(kCrossings) + " mmaps");
  }
  if (capture.count() > 0 && capture.count() != crossings) {
    return report.decide(Verdict::kWrongCount, std::to_string(capture.count()) + " signals for " +
                                                   std::to_string(crossings) + " crossings");
  }
  decide_watermark_signal(report, {crossings, (revents & POLLIN) != 0, capture.count()}, "MMAP records");
}

SIGWAKE_CASE(watermark_threshold, {.expected = {watermark_fix()},
              .defining = kSiginfoEvidence + Words{"woken_after_record", "signalled_after_record"},
              .shown = kShownSignal,
              .kconfig = kPerfConfig}) {
  const int signo = SIGRTMIN + 6;
  SignalCapture capture(signo);
  std::uint32_t record_bytes = 0;  // one anonymous mmap's record, as this kernel writes it
  {
    PerfEvent probe = PerfEvent::open(mmap_watermark_attr(1), 0, -1);
    RingBuffer ring = RingBuffer::map(probe.fd(), 0);
    probe.enable();
    const AnonymousPage page;
    probe.disable();
    record_bytes = static_cast<std::uint32_t>(ring.head());
  }
  if (record_bytes == 0) return report.decide(Verdict::kNoRecord, "an anonymous mmap wrote no MMAP record");
  const std::uint32_t watermark = 2 * record_bytes + record_bytes / 2;
  PerfEvent event = PerfEvent::open(mmap_watermark_attr(watermark), 0, -1);
  event.request_signals(gettid(), signo, PerfEvent::Owner::kThread);
  RingBuffer ring = RingBuffer::map(event.fd(), 0);

  int woken_after = 0, signalled_after = 0;
  std::optional<AnonymousPage> pages[3];
  for (int i = 0; i < 3; ++i) {
    event.enable();
    pages[i].emplace();
    event.disable();
    const bool last = i == 2;
    const short revents = wait_readable(event.fd(), last ? kWakeupBudget : 0ms);
    if (last) capture.collect(kSignalGrace, kSettle);
    else capture.accept_pending();
    if (woken_after == 0 && (revents & POLLIN)) woken_after = i + 1;
    if (signalled_after == 0 && capture.count() > 0) signalled_after = i + 1;
  }
  report.add("record_bytes", static_cast<long long>(record_bytes));
  report.add("watermark_bytes", static_cast<long long>(watermark));
  const int records = add_record_evidence(report, ring.consume());
  report.add("woken_after_record", static_cast<long long>(woken_after));
  report.add("signalled_after_record", static_cast<long long>(signalled_after));
  add_signal_evidence(report, capture);

  if (records < 3) return report.decide(Verdict::kNoRecord, std::to_string(records) + " MMAP records for 3 mmaps");
  if ((woken_after != 0 && woken_after < 3) || (signalled_after != 0 && signalled_after < 3)) {
    return report.decide(Verdict::kWrongCount, "a wakeup or signal came below the watermark, after record " +
                                                   std::to_string(std::min(woken_after ? woken_after : 3,
                                                                           signalled_after ? signalled_after : 3)));
  }
  if (capture.count() > 1) {
    return report.decide(Verdict::kWrongCount, std::to_string(capture.count()) + " signals for one crossing");
  }
  decide_watermark_signal(report, {records, woken_after == 3, capture.count()}, "MMAP records");
}

namespace {

// Writes records one `write()` at a time into a 1-page ring opened with `attr` (no watermark asked for,
// wakeup_events 0) and decides where the first POLLIN came: with the record that took data_head past half
// the ring, not before, not after.
void decide_default_watermark(Report& report, perf_event_attr attr, const std::function<void()>& write,
                              const char* records_are) {
  attr.watermark = 0;
  attr.wakeup_events = 0;
  PerfEvent event = PerfEvent::open(attr, 0, -1);
  RingBuffer ring = RingBuffer::map(event.fd(), 0);
  const std::uint64_t half = ring_data_bytes(0) / 2;

  std::uint64_t head = 0, woken_at = 0;
  while (woken_at == 0 && head <= half + half / 2) {  // bounded: past the half by half again, the wakeup is lost
    event.enable();
    write();
    event.disable();
    const std::uint64_t now = ring.head();
    if (now == head) return report.decide(Verdict::kNoRecord, std::string("no ") + records_are + " written");
    if (wait_readable(event.fd(), 0ms) & POLLIN) woken_at = now;
    head = now;
  }
  report.add("default_watermark_bytes", static_cast<long long>(half));
  report.add("woken_at_bytes", static_cast<long long>(woken_at));
  add_record_evidence(report, ring.consume());

  if (woken_at == 0) {
    return report.decide(Verdict::kNoWakeup, "data_head went past half the ring (" + std::to_string(head) +
                                                 " bytes) and poll() never reported POLLIN");
  }
  if (woken_at <= half) {
    return report.decide(Verdict::kWrongCount, "woken at " + std::to_string(woken_at) +
                                                   " bytes, at or below the default watermark (half the ring)");
  }
  report.decide(Verdict::kDelivered, std::string("woken by the ") + records_are + " that took data_head past half "
                                                                                   "the ring");
}

}  // namespace

SIGWAKE_CASE(watermark_threshold_default, {.expected = {always(Verdict::kDelivered,
                                     "with no watermark asked for, ring_buffer_init() in kernel/events/ring_buffer.c "
                                     "sets rb->watermark to half the data area (max_size / 2), and "
                                     "__perf_output_begin() marks a wakeup when a write takes data_head past it")},
              .shown = {"records"},
              .kconfig = kPerfConfig}) {
  decide_default_watermark(report, mmap_watermark_attr(1), [] { const AnonymousPage page; }, "MMAP record");
}

SIGWAKE_CASE(watermark_threshold_default_samples, {.expected = {always(Verdict::kDelivered,
                                     "with no watermark asked for, ring_buffer_init() in kernel/events/ring_buffer.c "
                                     "sets rb->watermark to half the data area (max_size / 2), and "
                                     "__perf_output_begin() marks a wakeup when a write takes data_head past it; "
                                     "perf_output_sample() in kernel/events/core.c counts a sample toward a wakeup "
                                     "only when wakeup_events is set")},
              .shown = {"records"},
              .kconfig = kPerfConfig}) {
  decide_default_watermark(report, fault_address_attr(1), [] {
    const AnonymousPage page;
    *reinterpret_cast<volatile char*>(page.address()) = 1;  // its first touch: a fault, a sample
  }, "sample");
}

}  // namespace sigwake
