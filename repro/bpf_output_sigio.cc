// BPF output: a BPF program writes with bpf_perf_event_output() into a
// PERF_EVENT_ARRAY slot holding a PERF_COUNT_SW_BPF_OUTPUT event with FASYNC +
// F_SETOWN + F_SETSIG. The record takes perf_output_end() -> perf_output_wakeup()
// and is no overflow (no pending_kill from __perf_event_overflow()), so the
// output wakeup is the only path that can signal; it does since v6.10.
//  - bpf_output_sigio: woken at a 1-byte watermark, like rr's setup.
//  - bpf_output_wakeup_events: woken by wakeup_events=1 (no watermark), the
//    sample-count path of perf_output_sample() -> rb->wakeup.
//  - bpf_output_wakeup_events_count: wakeup_events=2 wakes every second sample.
//  - bpf_output_sample_size: an event that asks no PERF_SAMPLE_RAW gets samples
//    of exactly what it asks (PERF_SAMPLE_TID), the program's bytes left out.
// The program runs through BPF_PROG_TEST_RUN on CPU 0: we decide when it writes.
// Control: libbpf's perf_buffer (epoll) consumer gets the record on every kernel.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "bpf/bpf_output.skel.h"
#include "lib/bpf_load.h"
#include "lib/budgets.h"
#include "lib/decide.h"
#include "lib/evidence.h"
#include "lib/process.h"
#include "lib/repro.h"

namespace sigwake {
namespace {

constexpr int kENOTSUPP = 524;  // the kernel's "not supported" for this command, not in the libc headers
constexpr std::uint64_t kMarker = 0x73696777616b65;  // "sigwake": the record carries it

struct Writer {
  Skeleton<bpf_output_bpf, bpf_output_bpf__open, bpf_output_bpf__load, bpf_output_bpf__destroy> skeleton;

  explicit Writer(Report& report)
      : skeleton(report, BPF_PROG_TYPE_RAW_TRACEPOINT, [](bpf_output_bpf& s) { s.rodata->marker = kMarker; }, [] {
          return libbpf_probe_bpf_helper(BPF_PROG_TYPE_RAW_TRACEPOINT, BPF_FUNC_perf_event_output, nullptr) != 0
                     ? ""
                     : "probe: libbpf_probe_bpf_helper says raw_tp programs cannot call bpf_perf_event_output";
        }) {}

  int map_fd() const { return bpf_map__fd(skeleton->maps.events); }

  // The event the program's records go to: slot 0 of its PERF_EVENT_ARRAY (write_on_cpu0() runs on CPU 0).
  void write_into(const PerfEvent& event) const {
    const std::uint32_t slot = 0;
    const int fd = event.fd();
    check(bpf_map_update_elem(map_fd(), &slot, &fd, BPF_ANY) == 0, "bpf_map_update_elem(PERF_EVENT_ARRAY)");
  }

  // One record, written on CPU 0 into whatever event sits in slot 0.
  void write_on_cpu0() const {
    LIBBPF_OPTS(bpf_test_run_opts, run, .flags = BPF_F_TEST_RUN_ON_CPU, .cpu = 0);
    if (bpf_prog_test_run_opts(bpf_program__fd(skeleton->progs.emit), &run) != 0) {
      // BPF_PROG_TEST_RUN of raw_tp programs on a chosen CPU came with v5.10.
      if (errno == kENOTSUPP || errno == EINVAL) throw Unsupported(errno_text("BPF_PROG_TEST_RUN of a raw_tp program (v5.10+)"));
      throw ReproError(errno_text("BPF_PROG_TEST_RUN"));
    }
    if (run.retval != 0) throw ReproError("bpf_perf_event_output() returned " + std::to_string(static_cast<int>(run.retval)));
  }
};

// PERF_RECORD_SAMPLE with PERF_SAMPLE_RAW: u32 size, then the raw bytes.
bool carries_marker(const void* raw, std::size_t size) {
  std::uint64_t value = 0;
  if (size < sizeof value) return false;
  std::memcpy(&value, raw, sizeof value);
  return value == kMarker;
}

// Writes one record into an event set up by `attr`'s wakeup fields, and decides.
void output_signal(Report& report, perf_event_attr attr) {
  SignalCapture sigio(SIGIO);
  pin_to_cpu(0);
  const Writer writer(report);
  PerfEvent event = PerfEvent::open(attr, -1, 0);
  event.request_signals(getpid(), SIGIO);
  RingBuffer ring = RingBuffer::map(event.fd(), 0);
  writer.write_into(event);

  writer.write_on_cpu0();
  const short revents = wait_readable(event.fd(), kWakeupBudget);
  sigio.wait_for(1, Deadline(kSignalGrace));

  int ours = 0;
  const RecordRead read = ring.consume();
  for (const Record& record : read.records) {
    constexpr std::size_t at = sizeof(perf_event_header);
    if (record.type != PERF_RECORD_SAMPLE || record.bytes.size() < at + 4) continue;
    std::uint32_t size = 0;
    std::memcpy(&size, record.bytes.data() + at, sizeof size);
    ours += carries_marker(record.bytes.data() + at + 4, std::min<std::size_t>(size, record.bytes.size() - at - 4));
  }
  add_record_evidence(report, read);
  report.add("records_with_marker", static_cast<long long>(ours));
  add_poll_evidence(report, revents);
  add_signal_evidence(report, sigio);
  decide_watermark_signal(report, {ours, (revents & POLLIN) != 0, sigio.count()}, "BPF output record");
}

perf_event_attr bpf_output_attr() {
  perf_event_attr attr = blank_attr(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_BPF_OUTPUT);
  attr.sample_type = PERF_SAMPLE_RAW;
  attr.sample_period = 1;
  return attr;
}

}  // namespace

SIGWAKE_CASE(bpf_output_sigio, {.expected = {bpf_needs_privilege(), watermark_fix()},
              .defining = kSiginfoEvidence,
              .shown = kShownSignal,
              .kconfig = kBpfConfig + Words{"CONFIG_NET"}}) {
  perf_event_attr attr = bpf_output_attr();
  attr.watermark = 1;
  attr.wakeup_watermark = 1;
  output_signal(report, attr);
}

SIGWAKE_CASE(bpf_output_wakeup_events, {.expected = {bpf_needs_privilege(), watermark_fix()},
              .defining = kSiginfoEvidence,
              .shown = kShownSignal,
              .kconfig = kBpfConfig + Words{"CONFIG_NET"}}) {
  perf_event_attr attr = bpf_output_attr();
  attr.wakeup_events = 1;
  output_signal(report, attr);
}

// wakeup_events counts: with 2, four writes wake at the second and the fourth
// only (perf_output_sample() takes the count back down at each wakeup). rb->poll
// is set inside the write, so a poll() after each write reads it exactly.
SIGWAKE_CASE(bpf_output_wakeup_events_count, {.expected = {bpf_needs_privilege(),
                           always(Verdict::kDelivered,
                                  "perf_output_sample() in kernel/events/core.c counts samples in rb->events and, at "
                                  "wakeup_events, takes wakeup_events back off and marks a wakeup: with 2, every "
                                  "second BPF output sample wakes the ring")},
              .shown = {"records"},
              .kconfig = kBpfConfig + Words{"CONFIG_NET"}}) {
  pin_to_cpu(0);
  const Writer writer(report);
  perf_event_attr attr = bpf_output_attr();
  attr.wakeup_events = 2;
  PerfEvent event = PerfEvent::open(attr, -1, 0);
  RingBuffer ring = RingBuffer::map(event.fd(), 0);
  writer.write_into(event);

  std::string woken;
  for (int write = 1; write <= 4; ++write) {
    writer.write_on_cpu0();
    if (wait_readable(event.fd(), 0ms) & POLLIN) woken += (woken.empty() ? "" : ",") + std::to_string(write);
  }
  const int records = add_record_evidence(report, ring.consume());
  report.add("woken_after_writes", woken.empty() ? "none" : woken);
  if (records < 4) return report.decide(Verdict::kNoRecord, std::to_string(records) + " records for 4 writes");
  if (woken.empty()) return report.decide(Verdict::kNoWakeup, "4 samples at wakeup_events=2, poll() never woke");
  if (woken != "2,4") {
    return report.decide(Verdict::kWrongCount, "woken after writes " + woken + " where wakeup_events=2 wakes "
                                                                              "after the 2nd and the 4th");
  }
  report.decide(Verdict::kDelivered, "woken after the 2nd and the 4th write");
}

SIGWAKE_CASE(bpf_output_sample_size,
             {.expected = {bpf_needs_privilege(),
                           fixed_by("b9c44b91476b", Verdict::kWrongCount, Verdict::kMeasured,
                                    "b9c44b91476b \"perf/core: Save raw sample data conditionally based on sample "
                                    "type\" (stable 6.12.13, as Debian's changelog places it; its upstream release is not "
                                    "confirmed here): perf_sample_save_raw_data() in include/linux/perf_event.h "
                                    "counts the raw data into a sample only when its sample_type asks "
                                    "PERF_SAMPLE_RAW; before, a BPF output sample without it was sized with the "
                                    "raw bytes it never wrote (6.1 sized samples in perf_prepare_sample(), right)")
                               .backported({"6.12.13"})},
              .defining = {"sample_bytes"},
              .shown = {"sample_bytes"},
              .kconfig = kBpfConfig + Words{"CONFIG_NET"}}) {
  pin_to_cpu(0);
  const Writer writer(report);
  perf_event_attr attr = bpf_output_attr();
  attr.sample_type = PERF_SAMPLE_TID;  // pid and tid: 8 bytes after the header, and nothing of the program's
  PerfEvent event = PerfEvent::open(attr, -1, 0);
  RingBuffer ring = RingBuffer::map(event.fd(), 0);
  writer.write_into(event);
  writer.write_on_cpu0();
  const RecordRead read = ring.consume();
  add_record_evidence(report, read);
  constexpr std::size_t kAsked = sizeof(perf_event_header) + 2 * sizeof(std::uint32_t);
  std::size_t bytes = 0;
  for (const Record& record : read.records) {
    if (record.type == PERF_RECORD_SAMPLE) bytes = record.bytes.size();
  }
  report.add("sample_bytes", static_cast<long long>(bytes));
  if (bytes == 0) return report.decide(Verdict::kNoRecord, "the program wrote, the ring holds no sample");
  if (bytes != kAsked) {
    return report.decide(Verdict::kWrongCount, "a sample of " + std::to_string(bytes) + " bytes where PERF_SAMPLE_TID "
                                               "alone is " + std::to_string(kAsked));
  }
  report.decide(Verdict::kMeasured, "the sample holds what its sample_type asks, and nothing more");
}

SIGWAKE_CASE(bpf_output_perf_buffer, {.expected = {bpf_needs_privilege(),
                           always(Verdict::kDelivered,
                                  "bpf_perf_event_output() writes through perf_output_begin()/perf_output_end(), "
                                  "whose wakeup has always woken poll and epoll waiters (libbpf's perf_buffer "
                                  "consumer)")},
              .kconfig = kBpfConfig + Words{"CONFIG_NET"}}) {
  pin_to_cpu(0);
  const Writer writer(report);
  struct Received {
    int samples = 0, with_marker = 0;
    long long lost = 0;
  } received;
  perf_buffer* buffer = perf_buffer__new(
      writer.map_fd(), 1,
      [](void* ctx, int, void* data, __u32 size) {
        auto* r = static_cast<Received*>(ctx);
        ++r->samples;
        r->with_marker += carries_marker(data, size);
      },
      [](void* ctx, int, __u64 lost) { static_cast<Received*>(ctx)->lost += static_cast<long long>(lost); },
      &received, nullptr);
  if (buffer == nullptr) throw Unsupported("perf_buffer__new: perf_event_open: " + explain_open_errno(errno));

  writer.write_on_cpu0();
  const Deadline deadline(kWakeupBudget);
  while (received.samples == 0 && !deadline.expired()) {
    const int rc = perf_buffer__poll(buffer, static_cast<int>(deadline.remaining_ns() / 1'000'000) + 1);
    if (rc < 0 && rc != -EINTR) {
      perf_buffer__free(buffer);
      errno = -rc;
      throw ReproError(errno_text("perf_buffer__poll"));
    }
  }
  perf_buffer__free(buffer);

  report.add("samples", static_cast<long long>(received.samples));
  report.add("records_with_marker", static_cast<long long>(received.with_marker));
  report.add("lost", received.lost);
  if (received.with_marker > 0) return report.decide(Verdict::kDelivered, "epoll woke libbpf's consumer");
  if (received.samples == 0) return report.decide(Verdict::kNoWakeup, "epoll never reported the record within the budget");
  report.decide(Verdict::kNoRecord, "records came, none carried our marker");
}

}  // namespace sigwake
