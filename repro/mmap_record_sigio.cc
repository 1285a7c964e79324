// rr's startup probe: a DUMMY event with mmap_data on the calling thread itself,
// one data page, watermark 1, FASYNC + F_SETOWN_EX(F_OWNER_TID) + F_SETSIG; one
// anonymous mmap writes one PERF_RECORD_MMAP. rr treats more than one signal as
// fatal, so the exact count matters: the signal is real-time, which queues every
// send instead of merging them, and we count the whole burst.
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include "lib/attrs.h"
#include "lib/budgets.h"
#include "lib/evidence.h"
#include "lib/process.h"
#include "lib/repro.h"

namespace sigwake {

SIGWAKE_CASE(mmap_record_sigio) {
  const int signo = SIGRTMIN + 1;
  SignalCapture capture(signo);
  PerfEvent event = PerfEvent::open(mmap_watermark_attr(1), 0, -1);
  event.request_signals(gettid(), signo, PerfEvent::Owner::kThread);
  RingBuffer ring = RingBuffer::map(event.fd(), 0);

  event.enable();
  const AnonymousPage page;  // the one record
  event.disable();

  const short revents = wait_readable(event.fd(), kWakeupBudget);
  capture.collect(kSignalGrace, kSettle);

  int ours = 0;
  const RecordRead read = ring.consume();
  for (const Record& record : read.records) {
    const auto mmap = parse_mmap(record);
    ours += mmap && mmap->addr == page.address() && mmap->tid == static_cast<std::uint32_t>(gettid());
  }
  const int records = add_record_evidence(report, read);
  report.add("mmap_records_of_our_page", static_cast<long long>(ours));
  add_poll_evidence(report, revents);
  add_signal_evidence(report, capture);

  if (capture.count() > 0) {
    const bool to_us = capture.deliveries()[0].tid == gettid();
    return report.decide(to_us ? Verdict::kDelivered : Verdict::kNotDelivered,
                         to_us ? "" : "the signal went to another thread than F_OWNER_TID named");
  }
  if (records > 0 && (revents & POLLIN)) {
    return report.decide(Verdict::kNotDelivered, "MMAP record written and POLLIN reported, no signal within the grace");
  }
  report.decide(Verdict::kError, "no MMAP record or no POLLIN within the budget");
}

}  // namespace sigwake
