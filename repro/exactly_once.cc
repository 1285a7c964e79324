// A burst of watermark crossings: how many signals does each bring (0, 1 or
// more)? Each anonymous mmap writes one PERF_RECORD_MMAP past a 1-byte
// watermark, so each is a crossing; the signal is real-time, so every send is
// queued and counted rather than merged.
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <optional>

#include "lib/attrs.h"
#include "lib/budgets.h"
#include "lib/decide.h"
#include "lib/evidence.h"
#include "lib/process.h"
#include "lib/repro.h"

namespace sigwake {

SIGWAKE_CASE(exactly_once) {
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
  for (const Record& record : read.records) {
    const auto mmap = parse_mmap(record);
    for (const auto& page : pages) crossings += mmap && mmap->addr == page->address();
  }
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

}  // namespace sigwake
