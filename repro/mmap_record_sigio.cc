// rr's startup probe, step for step (src/ContextSwitchEvent.cc,
// can_use_switch_records(), rr 5.9.0+): a disabled DUMMY event with mmap_data
// on the calling thread, one data page, watermark 1; FASYNC and F_SETOWN_EX
// (F_OWNER_TID, itself) but no F_SETSIG, so the kernel's default path sends a
// plain SIGIO; the handler installed and SIGIO unblocked; enable, one
// anonymous mmap (one PERF_RECORD_MMAP), disable; then rr counts the handler's
// runs: 0 means "old kernel", more than 1 is fatal to rr. The verdict is what
// rr would conclude; the signals that come later are evidence.
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <unistd.h>

#include "lib/attrs.h"
#include "lib/budgets.h"
#include "lib/decide.h"
#include "lib/evidence.h"
#include "lib/process.h"
#include "lib/repro.h"

namespace sigwake {

SIGWAKE_CASE(mmap_record_sigio, {.expected = {watermark_fix()},
              .defining = kSiginfoEvidence + Words{"signals_by_disable"},
              .shown = kShownSignal,
              .kconfig = kPerfConfig}) {
  SignalCapture sigio(SIGIO);
  perf_event_attr attr = mmap_watermark_attr(1);
  attr.exclude_guest = 1;  // as rr sets it
  PerfEvent event = PerfEvent::open(attr, 0, -1);
  RingBuffer ring = RingBuffer::map(event.fd(), 0);
  event.request_signals(gettid(), 0, PerfEvent::Owner::kThread);

  int by_disable = 0;
  std::uint64_t address = 0;
  {
    const SignalCapture::Unblocked as_rr(sigio);  // the handler runs as the syscalls return
    event.enable();
    void* page = mmap(nullptr, 1, PROT_READ, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
    check(page != MAP_FAILED, "mmap(MAP_ANONYMOUS)");
    address = reinterpret_cast<std::uintptr_t>(page);
    event.disable();
    by_disable = sigio.count();
    check(munmap(page, 1) == 0, "munmap");
  }
  const short revents = wait_readable(event.fd(), kWakeupBudget);
  sigio.collect(kSignalGrace, kSettle);

  const RecordRead read = ring.consume();
  const int ours = count_mmaps_of(read, address, static_cast<std::uint32_t>(gettid()));
  add_record_evidence(report, read);
  report.add("mmap_records_of_our_page", static_cast<long long>(ours));
  add_poll_evidence(report, revents);
  add_signal_evidence(report, sigio);
  report.add("signals_by_disable", static_cast<long long>(by_disable));

  if (by_disable > 1) {
    return report.decide(Verdict::kWrongCount, std::to_string(by_disable) + " SIGIOs for one record: rr aborts");
  }
  if (by_disable == 0 && sigio.count() > 0) {
    return report.decide(Verdict::kNotDelivered, "the SIGIO came only after the probe had looked (rr: old kernel)");
  }
  decide_watermark_signal(report, {ours, (revents & POLLIN) != 0, by_disable}, "MMAP record of our page");
}

}  // namespace sigwake
