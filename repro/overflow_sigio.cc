// Control for watermark_sigio: a sample overflow raises SIGIO on every kernel,
// because __perf_event_overflow() sets pending_kill and queues the wakeup
// itself. The ring's watermark is its whole data area, so the output path
// (perf_output_wakeup()) never fires: a signal here comes from the overflow
// path alone, and poll() must stay quiet.
//  - overflow_sigio_refresh: PERF_EVENT_IOC_REFRESH 1 arms the event for one
//    overflow; at it __perf_event_overflow() sets pending_kill to POLL_HUP and
//    disables the event: one signal with si_code POLL_HUP, one sample, no more.
//    A counting event (no sample period) and an inherited one must refuse
//    REFRESH (EINVAL).
//  - overflow_sigio_refresh_woken: the same with a 1-byte watermark, so writing
//    that sample wakes the ring too. perf_output_wakeup() finds pending_kill set
//    by the overflow and must keep its POLL_HUP (it sets POLL_IN only when nothing
//    is pending): POLLIN, and still one signal with POLL_HUP.
//  - overflow_sigio_refresh_two_periods: the limit where one count spans two
//    periods. A page-fault event (period 1) armed with REFRESH 1 is given
//    PERF_EVENT_IOC_PERIOD 2 while it runs, which zeroes its left count with its
//    last period still 1, so our next fault is two overflows. The first reaches
//    the limit and returns 1, and perf_swevent_overflow() must stop there: one
//    sample and one signal with POLL_HUP (a second overflow past the limit would
//    set POLL_IN back and write a second sample). A control event without the
//    limit, given the same period change, shows the fault made two overflows.
//  - overflow_sigio_refresh_page_faults: REFRESH 1 on a page-fault event, and
//    two pages touched: the limit's overflow disables the event (its irq_work
//    runs before the fault returns to user space), so the second writes nothing.
//  - overflow_sigio_page_faults: the plain overflow from a software event the
//    kernel counts as it happens (PERF_COUNT_SW_PAGE_FAULTS, period 1:
//    do_perf_sw_event() and its recursion guard, not a timer): each page we
//    touch is a sample, and the overflow signals.
//  - overflow_sigio_group_read: the sampling event is a sibling in a group led
//    by a counting task-clock, and its samples carry the group's counts
//    (PERF_SAMPLE_READ, PERF_FORMAT_GROUP). perf_output_read_group() reads the
//    leader afresh for each sample (unless the PMU already did, handle->skip_read):
//    both clocks run from the same enable, so the leader's count in a sample is
//    never behind the sampling event's own (wrong-count if it is).
#include <errno.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lib/attrs.h"
#include "lib/budgets.h"
#include "lib/decide.h"
#include "lib/evidence.h"
#include "lib/process.h"
#include "lib/repro.h"
#include "lib/ring_buffer.h"
#include "lib/two_periods.h"

namespace sigwake {

constexpr std::uint64_t kPeriodNs = 100'000;

SIGWAKE_CASE(overflow_sigio, {.expected = {overflow_signal()}, .defining = kSiginfoEvidence, .shown = kShownSignal, .kconfig = kPerfConfig}) {
  SignalCapture sigio(SIGIO);  // first in, last out: outlives the event
  PerfEvent event =
      PerfEvent::open(task_clock_overflow_attr(kPeriodNs, ring_data_bytes(kOverflowRingPagesLog2)), 0, -1);
  event.request_signals(getpid(), SIGIO);
  RingBuffer ring = RingBuffer::map(event.fd(), kOverflowRingPagesLog2);
  event.enable();

  // Our own CPU time is the trigger: spend it until the first sample, then
  // give its signal the grace.
  const Deadline deadline(kWakeupBudget);
  const std::int64_t start = monotonic_ns();
  while (ring.head() == 0 && !deadline.expired()) burn_cpu(1ms);
  event.disable();
  sigio.wait_for(1, Deadline(kSignalGrace));
  const std::int64_t decided = monotonic_ns();
  const short revents = wait_readable(event.fd(), 0ms);

  report.add("data_head", static_cast<long long>(ring.head()));
  const int records = add_record_evidence(report, ring.consume());
  add_poll_evidence(report, revents);
  add_signal_evidence(report, sigio);
  report.add("decided_after_us", static_cast<long long>((decided - start) / 1000));
  decide_overflow_signal(report, {records, (revents & POLLIN) != 0, sigio.count()});
}

namespace {

// A sampling event that signals us with a real-time signal (each send queued, none merged), its signals
// captured from before it opens until after it closes, and its ring.
struct SignallingEvent {
  explicit SignallingEvent(const perf_event_attr& attr)
      : event(PerfEvent::open(attr, 0, -1)), ring(RingBuffer::map(event.fd(), kOverflowRingPagesLog2)) {
    event.request_signals(getpid(), kSignal);
  }
  static inline const int kSignal = SIGRTMIN + 7;
  SignalCapture capture{kSignal};  // first in, last out
  PerfEvent event;
  RingBuffer ring;
};

// Decides what the refresh limit itself promises, where it was broken: a signal without si_code POLL_HUP,
// or more than one sample or signal (`where` says for what). Says whether it decided.
bool decided_limit_broken(Report& report, const SignalCapture& capture, int records, const std::string& where) {
  if (capture.count() > 0 && capture.deliveries()[0].code != POLL_HUP) {
    report.decide(Verdict::kMisdelivered, "the refresh limit's signal came without si_code POLL_HUP");
    return true;
  }
  if (records > 1 || capture.count() > 1) {
    report.decide(Verdict::kWrongCount, std::to_string(records) + " records and " + std::to_string(capture.count()) +
                                            " signals " + where + ", where REFRESH 1 allows one");
    return true;
  }
  return false;
}

// PERF_EVENT_IOC_REFRESH 1 on a sampling event whose ring wakes at `watermark`
// bytes: spends CPU time until the first sample, then as long again (a disabled
// event writes no more). Decides what the refresh limit itself promises (one
// sample, one signal, si_code POLL_HUP) or returns what was seen.
std::optional<Seen> refresh_once(Report& report, std::uint32_t watermark) {
  SignallingEvent limited(task_clock_overflow_attr(kPeriodNs, watermark));
  auto& [capture, event, ring] = limited;
  check(ioctl(event.fd(), PERF_EVENT_IOC_REFRESH, 1) == 0, "PERF_EVENT_IOC_REFRESH");

  const Deadline deadline(kWakeupBudget);
  const std::int64_t start = monotonic_ns();
  while (ring.head() == 0 && !deadline.expired()) burn_cpu(1ms);
  burn_cpu(std::chrono::microseconds((monotonic_ns() - start) / 1000 + 1000));
  capture.collect(kSignalGrace, kSettle);
  const short revents = wait_readable(event.fd(), 0ms);

  const int records = add_record_evidence(report, ring.consume());
  add_poll_evidence(report, revents);
  add_signal_evidence(report, capture);
  if (decided_limit_broken(report, capture, records, "of a task clock burnt past its limit")) return std::nullopt;
  return Seen{records, (revents & POLLIN) != 0, capture.count()};
}

}  // namespace

SIGWAKE_CASE(overflow_sigio_refresh, {.expected = {overflow_signal()}, .defining = kSiginfoEvidence, .shown = kShownSignal, .kconfig = kPerfConfig}) {
  // _perf_event_refresh() refuses a counting event, whose limit no overflow could reach, and an inherited one:
  // the refresh would arm the parent alone, and its inherited children would overflow with no limit.
  const auto refused = [](const perf_event_attr& attr) {
    const PerfEvent event = PerfEvent::open(attr, 0, -1);
    return ioctl(event.fd(), PERF_EVENT_IOC_REFRESH, 1) == -1 && errno == EINVAL;
  };
  perf_event_attr counting = task_clock_overflow_attr(kPeriodNs, 1);
  counting.sample_period = 0;
  const bool counting_refused = refused(counting);
  report.add("refresh_of_a_counting_event", counting_refused ? "EINVAL" : "accepted");
  perf_event_attr inherited = task_clock_overflow_attr(kPeriodNs, 1);
  inherited.inherit = 1;
  const bool inherited_refused = refused(inherited);
  report.add("refresh_of_an_inherited_event", inherited_refused ? "EINVAL" : "accepted");
  if (!counting_refused || !inherited_refused) {
    const std::string accepted = !counting_refused && !inherited_refused ? "a counting and an inherited event"
                                 : !counting_refused                     ? "a counting event"
                                                                         : "an inherited event";
    return report.decide(Verdict::kMisdelivered, "PERF_EVENT_IOC_REFRESH accepted on " + accepted);
  }
  if (const auto seen = refresh_once(report, ring_data_bytes(kOverflowRingPagesLog2))) {
    decide_overflow_signal(report, *seen);
  }
}

SIGWAKE_CASE(overflow_sigio_refresh_woken, {.expected = {always(Verdict::kDelivered,
                                     "at the PERF_EVENT_IOC_REFRESH limit __perf_event_overflow() in "
                                     "kernel/events/core.c sets pending_kill = POLL_HUP before it writes the sample; "
                                     "that write crossing a 1-byte watermark wakes the ring, and perf_output_wakeup() "
                                     "in kernel/events/ring_buffer.c sets POLL_IN only when nothing is pending (since "
                                     "fd20bb51ed39, v6.10; before, it never touched pending_kill): POLLIN and one "
                                     "signal with POLL_HUP")},
              .defining = kSiginfoEvidence,
              .shown = kShownSignal,
              .kconfig = kPerfConfig}) {
  if (const auto seen = refresh_once(report, 1)) decide_watermark_signal(report, *seen, "the refresh limit's sample");
}

SIGWAKE_CASE(overflow_sigio_refresh_two_periods,
             {.expected = {always(Verdict::kDelivered,
                                  "at the PERF_EVENT_IOC_REFRESH limit __perf_event_overflow() in kernel/events/core.c "
                                  "returns 1 (pending_kill = POLL_HUP, the event disabled), and perf_swevent_overflow() "
                                  "stops its loop over the periods one count spans at the first overflow that returns "
                                  "1: one sample and one signal with POLL_HUP")},
              .defining = kSiginfoEvidence,
              .shown = kShownSignal,
              .kconfig = kPerfConfig}) {
  attempt_two_periods([&report](int attempt) {
    SignallingEvent limited(fault_address_attr(ring_data_bytes(kOverflowRingPagesLog2)));
    auto& [capture, event, ring] = limited;
    const AnonymousPage page;
    if (!fault_spanning_two_periods(event, page, 1)) return false;
    capture.collect(kSignalGrace, kSettle);
    const short revents = wait_readable(event.fd(), 0ms);

    report.add("attempts", static_cast<long long>(attempt));
    const RecordRead read = ring.consume();
    report.add("samples_of_the_fault", static_cast<long long>(samples_of_fault(read, page.address())));
    const int records = add_record_evidence(report, read);
    add_poll_evidence(report, revents);
    add_signal_evidence(report, capture);
    if (!decided_limit_broken(report, capture, records, "of one fault spanning two periods")) {
      decide_overflow_signal(report, {records, (revents & POLLIN) != 0, capture.count()});
    }
    return true;
  });
}

SIGWAKE_CASE(overflow_sigio_refresh_page_faults,
             {.expected = {always(Verdict::kDelivered,
                                  "at the PERF_EVENT_IOC_REFRESH limit __perf_event_overflow() in kernel/events/core.c "
                                  "disables the event (perf_event_disable_inatomic(): an irq_work that runs before the "
                                  "fault returns to user space), so a page-fault event writes nothing for a later "
                                  "fault: one sample and one signal with POLL_HUP")},
              .defining = kSiginfoEvidence,
              .shown = kShownSignal,
              .kconfig = kPerfConfig}) {
  SignallingEvent limited(fault_address_attr(ring_data_bytes(kOverflowRingPagesLog2)));
  auto& [capture, event, ring] = limited;
  perf_event_attr counting = fault_address_attr(1);
  counting.sample_period = 0;
  // Counting from just after the refresh: two faults counted there mean one at least came past the limit, which
  // is the first fault after the refresh.
  const PerfEvent faults = PerfEvent::open(counting, 0, -1);
  const AnonymousPage first, second;  // mapped, never touched
  check(ioctl(event.fd(), PERF_EVENT_IOC_REFRESH, 1) == 0, "PERF_EVENT_IOC_REFRESH");
  faults.enable();
  *reinterpret_cast<volatile char*>(first.address()) = 1;  // the limit (or an earlier fault of ours)
  *reinterpret_cast<volatile char*>(second.address()) = 1;  // past it
  event.disable();
  faults.disable();
  capture.collect(kSignalGrace, kSettle);
  const short revents = wait_readable(event.fd(), 0ms);

  std::uint64_t counted = 0;
  check(read(faults.fd(), &counted, sizeof counted) == sizeof counted, "read(the fault count)");
  report.add("faults_counted", static_cast<long long>(counted));
  const RecordRead read = ring.consume();
  report.add("limit_at_first_page", samples_of_fault(read, first.address()) == 1);
  const int records = add_record_evidence(report, read);
  add_poll_evidence(report, revents);
  add_signal_evidence(report, capture);
  if (counted < 2) throw ReproError("fewer than two page faults counted after the refresh: none came past the limit");
  if (decided_limit_broken(report, capture, records, "of two page faults")) return;
  decide_overflow_signal(report, {records, (revents & POLLIN) != 0, capture.count()});
}

SIGWAKE_CASE(overflow_sigio_page_faults, {.expected = {overflow_signal()}, .defining = kSiginfoEvidence, .shown = kShownSignal, .kconfig = kPerfConfig}) {
  SignalCapture sigio(SIGIO);  // first in, last out: outlives the event
  perf_event_attr attr = task_clock_overflow_attr(1, ring_data_bytes(kOverflowRingPagesLog2));
  attr.config = PERF_COUNT_SW_PAGE_FAULTS;
  PerfEvent event = PerfEvent::open(attr, 0, -1);
  event.request_signals(getpid(), SIGIO);
  RingBuffer ring = RingBuffer::map(event.fd(), kOverflowRingPagesLog2);
  constexpr int kPages = 4;
  std::vector<std::unique_ptr<AnonymousPage>> pages;  // mapped before: only our first touch of each faults
  for (int i = 0; i < kPages; ++i) pages.push_back(std::make_unique<AnonymousPage>());
  event.enable();
  const std::int64_t start = monotonic_ns();
  for (const auto& page : pages) *reinterpret_cast<volatile char*>(page->address()) = 1;
  event.disable();
  sigio.wait_for(1, Deadline(kSignalGrace));
  const std::int64_t decided = monotonic_ns();
  const short revents = wait_readable(event.fd(), 0ms);

  report.add("pages_touched", static_cast<long long>(kPages));
  report.add("data_head", static_cast<long long>(ring.head()));
  const int records = add_record_evidence(report, ring.consume());
  add_poll_evidence(report, revents);
  add_signal_evidence(report, sigio);
  report.add("decided_after_us", static_cast<long long>((decided - start) / 1000));
  if (records > 0 && records < kPages) {
    return report.decide(Verdict::kWrongCount, std::to_string(records) + " samples for " + std::to_string(kPages) +
                                                   " pages first touched: a fault was not counted");
  }
  decide_overflow_signal(report, {records, (revents & POLLIN) != 0, sigio.count()});
}

SIGWAKE_CASE(overflow_sigio_group_read, {.expected = {overflow_signal()}, .defining = kSiginfoEvidence, .shown = kShownSignal, .kconfig = kPerfConfig}) {
  SignalCapture sigio(SIGIO);  // first in, last out: outlives the events
  perf_event_attr counting = task_clock_overflow_attr(kPeriodNs, 1);
  counting.sample_period = 0;
  const PerfEvent leader = PerfEvent::open(counting, 0, -1);
  perf_event_attr sampling = task_clock_overflow_attr(kPeriodNs, ring_data_bytes(kOverflowRingPagesLog2));
  sampling.sample_type |= PERF_SAMPLE_READ;
  sampling.read_format = PERF_FORMAT_GROUP;
  sampling.disabled = 0;  // scheduled with its leader
  PerfEvent event = PerfEvent::open(sampling, 0, -1, leader.fd());
  event.request_signals(getpid(), SIGIO);
  RingBuffer ring = RingBuffer::map(event.fd(), kOverflowRingPagesLog2);
  leader.enable();

  constexpr std::uint64_t kSamples = 3, kSampleBytes = 48;  // header, ip, pid/tid, nr, two counts
  const Deadline deadline(kWakeupBudget);
  const std::int64_t start = monotonic_ns();
  while (ring.head() < kSamples * kSampleBytes && !deadline.expired()) burn_cpu(1ms);
  leader.disable();
  sigio.wait_for(1, Deadline(kSignalGrace));
  const std::int64_t decided = monotonic_ns();
  const short revents = wait_readable(event.fd(), 0ms);

  report.add("data_head", static_cast<long long>(ring.head()));
  const RecordRead read = ring.consume();
  int behind = 0, unreadable = 0;
  std::string counts;
  for (const Record& record : read.records) {
    const auto group = parse_group_read_sample(record);
    if (!group || group->size() != 2) {
      unreadable += record.type == PERF_RECORD_SAMPLE;
      continue;
    }
    behind += (*group)[0] < (*group)[1];
    if (counts.size() < 200) counts += (counts.empty() ? "" : ",") + std::to_string((*group)[0]) + "/" +
                                       std::to_string((*group)[1]);
  }
  const int records = add_record_evidence(report, read);
  report.add("leader_sibling_counts", counts);
  report.add("samples_with_the_leader_behind", static_cast<long long>(behind));
  add_poll_evidence(report, revents);
  add_signal_evidence(report, sigio);
  report.add("decided_after_us", static_cast<long long>((decided - start) / 1000));
  if (unreadable > 0) {
    return report.decide(Verdict::kWrongCount, std::to_string(unreadable) + " samples without the group's two "
                                                                           "counts");
  }
  if (behind > 0) {
    return report.decide(Verdict::kWrongCount, std::to_string(behind) + " samples carry a leader count behind "
                                                                        "the sampling event's own: not read afresh");
  }
  decide_overflow_signal(report, {records, (revents & POLLIN) != 0, sigio.count()});
}

}  // namespace sigwake
