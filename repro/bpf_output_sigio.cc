// BPF output: a BPF program writes with bpf_perf_event_output() into a
// PERF_EVENT_ARRAY slot holding a PERF_COUNT_SW_BPF_OUTPUT event set up like
// rr's (watermark 1, FASYNC + F_SETOWN + F_SETSIG). The record takes the same
// perf_output_end() -> perf_output_wakeup() path, so it signals since v6.10.
// The program runs through BPF_PROG_TEST_RUN on CPU 0: we decide when it writes.
// Control: libbpf's perf_buffer (epoll) consumer gets the record on every kernel.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "bpf/bpf_output.skel.h"
#include "lib/budgets.h"
#include "lib/evidence.h"
#include "lib/process.h"
#include "lib/repro.h"

namespace sigwake {
namespace {

constexpr std::uint64_t kMarker = 0x73696777616b65;  // "sigwake": the record carries it

int quiet_libbpf(libbpf_print_level, const char*, va_list) { return 0; }

struct Writer {
  bpf_output_bpf* skeleton;

  Writer() {
    libbpf_set_print(quiet_libbpf);
    skeleton = bpf_output_bpf__open();
    if (skeleton == nullptr) throw Unsupported(errno_text("opening the BPF object"));
    skeleton->rodata->marker = kMarker;
    if (const int err = bpf_output_bpf__load(skeleton); err != 0) {
      bpf_output_bpf__destroy(skeleton);
      errno = -err;
      throw Unsupported(errno_text("loading the BPF program (CAP_BPF, or unprivileged_bpf_disabled)"));
    }
  }
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;
  ~Writer() { bpf_output_bpf__destroy(skeleton); }

  int map_fd() const { return bpf_map__fd(skeleton->maps.events); }

  // One record, written on CPU 0 into whatever event sits in slot 0.
  void write_on_cpu0() const {
    LIBBPF_OPTS(bpf_test_run_opts, run, .flags = BPF_F_TEST_RUN_ON_CPU, .cpu = 0);
    if (bpf_prog_test_run_opts(bpf_program__fd(skeleton->progs.emit), &run) != 0) {
      throw Unsupported(errno_text("BPF_PROG_TEST_RUN of a raw_tp program (v5.10+)"));
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

}  // namespace

SIGWAKE_CASE(bpf_output_sigio) {
  SignalCapture sigio(SIGIO);
  pin_to_cpu(0);
  const Writer writer;
  perf_event_attr attr = blank_attr(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_BPF_OUTPUT);
  attr.sample_type = PERF_SAMPLE_RAW;
  attr.sample_period = 1;
  attr.watermark = 1;
  attr.wakeup_watermark = 1;
  PerfEvent event = PerfEvent::open(attr, -1, 0);
  event.request_signals(getpid(), SIGIO);
  RingBuffer ring = RingBuffer::map(event.fd(), 0);
  const std::uint32_t slot = 0;
  const int fd = event.fd();
  check(bpf_map_update_elem(writer.map_fd(), &slot, &fd, BPF_ANY) == 0, "bpf_map_update_elem(PERF_EVENT_ARRAY)");

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
  const int records = add_record_evidence(report, read);
  report.add("records_with_marker", static_cast<long long>(ours));
  add_poll_evidence(report, revents);
  add_signal_evidence(report, sigio);

  if (sigio.count() > 0) return report.decide(Verdict::kDelivered);
  if (records > 0 && (revents & POLLIN)) {
    return report.decide(Verdict::kNotDelivered, "BPF output record written and POLLIN reported, no SIGIO");
  }
  report.decide(Verdict::kError, "no BPF output record or no POLLIN within the budget");
}

SIGWAKE_CASE(bpf_output_perf_buffer) {
  pin_to_cpu(0);
  const Writer writer;
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
  if (received.with_marker > 0) return report.decide(Verdict::kDelivered);
  report.decide(Verdict::kNotDelivered, "epoll never reported the record within the budget");
}

}  // namespace sigwake
