// A ring written backward (write_backward, 9ecda41acb97, v4.7; perf record --overwrite reads its rings so):
// __perf_output_begin() in kernel/events/ring_buffer.c moves data_head down by each record's size and writes
// the record at the new head, so the newest record is at data_head and the older ones above it; the
// watermark counts the bytes written (-head), as a forward ring counts head.
//  - backward_ring_records: three anonymous mappings leave three MMAP records read from data_head upward,
//    the newest first, each naming its page: `measured`; a record out of place reads `misdelivered`.
//  - backward_ring_watermark: with wakeup_watermark 2048, the first records do not wake a poller; mappings
//    made until the records pass the watermark do: `delivered`; a wakeup below it is `misdelivered`.
#include <poll.h>
#include <sys/mman.h>

#include <string>
#include <vector>

#include "lib/attrs.h"
#include "lib/evidence.h"
#include "lib/process.h"
#include "lib/records.h"
#include "lib/repro.h"
#include "lib/ring_buffer.h"

namespace sigwake {
namespace {

constexpr int kMappings = 3;
constexpr std::uint32_t kHighWatermark = 2048;  // half the 1-page ring: kMappings records stay far below it

// Anonymous pages kept mapped until the case ends, so that each mapping's MMAP record names its own address
// (a page unmapped at once is mapped again at the same address).
class Pages {
 public:
  Pages() = default;
  Pages(const Pages&) = delete;
  Pages& operator=(const Pages&) = delete;
  ~Pages() {
    for (void* page : pages_) munmap(page, 1);
  }
  std::uint64_t map() {
    void* page = mmap(nullptr, 1, PROT_READ, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
    check(page != MAP_FAILED, "mmap(MAP_ANONYMOUS)");
    pages_.push_back(page);
    return reinterpret_cast<std::uintptr_t>(page);
  }

 private:
  std::vector<void*> pages_;
};

perf_event_attr backward(std::uint32_t watermark_bytes) {
  perf_event_attr attr = mmap_watermark_attr(watermark_bytes);
  attr.write_backward = 1;
  return attr;
}

}  // namespace

SIGWAKE_CASE(backward_ring_records,
             {.expected = {always(Verdict::kMeasured,
                                  "__perf_output_begin() in kernel/events/ring_buffer.c, for a write_backward "
                                  "event, moves rb->head down by the record's size and writes at the new head "
                                  "(offset = head), which perf_output_put_handle() publishes as data_head")},
              .defining = {"records_read", "newest_first"},
              .shown = {"records_read", "newest_first"},
              .kconfig = kPerfConfig}) {
  PerfEvent event = PerfEvent::open(backward(1), 0, -1);
  RingBuffer ring = RingBuffer::map(event.fd(), 0);
  event.enable();
  Pages mapped;
  std::vector<std::uint64_t> pages;
  for (int i = 0; i < kMappings; ++i) pages.push_back(mapped.map());
  event.disable();

  const RecordRead read = ring.consume_backward();
  report.add("records_read", record_types(read));
  int in_place = 0;  // records naming the pages newest first, from data_head up
  for (std::size_t i = 0; i < read.records.size() && i < pages.size(); ++i) {
    const auto mapping = parse_mmap(read.records[i]);
    in_place += mapping && mapping->addr == pages[pages.size() - 1 - i];
  }
  report.add("newest_first", static_cast<long long>(in_place));
  if (read.records.empty() && !read.truncated) {
    return report.decide(Verdict::kNoRecord, "three mappings, no record from data_head up");
  }
  if (read.truncated || read.records.size() != pages.size() || in_place != kMappings) {
    return report.decide(Verdict::kMisdelivered, "from data_head up the ring held [" + record_types(read) + "], " +
                                                     std::to_string(in_place) + " of " + std::to_string(kMappings) +
                                                     " naming their pages newest first");
  }
  report.decide(Verdict::kMeasured, "three MMAP records from data_head up, the newest first");
}

SIGWAKE_CASE(backward_ring_watermark,
             {.expected = {always(Verdict::kDelivered,
                                  "__perf_output_begin() in kernel/events/ring_buffer.c turns a write_backward "
                                  "event's head into the bytes written (head = -head) before it compares it with "
                                  "the watermark, so the reader is woken as a forward ring's would be")},
              .defining = {"woken_below_watermark", "bytes_at_wakeup"},
              .shown = {"woken_below_watermark", "bytes_at_wakeup"},
              .kconfig = kPerfConfig}) {
  PerfEvent event = PerfEvent::open(backward(kHighWatermark), 0, -1);
  RingBuffer ring = RingBuffer::map(event.fd(), 0);
  event.enable();
  for (int i = 0; i < kMappings; ++i) map_one_page();
  const std::uint64_t written_below = -ring.head();
  const bool woken_below = (wait_readable(event.fd(), kQuietWindow) & POLLIN) != 0;
  report.add("woken_below_watermark", woken_below);
  const int most = static_cast<int>(ring_data_bytes(0) / sizeof(perf_event_header));
  for (int i = 0; i < most && static_cast<std::uint64_t>(-ring.head()) <= kHighWatermark; ++i) map_one_page();
  const std::uint64_t written = -ring.head();
  const bool woken = (wait_readable(event.fd(), kWakeupBudget) & POLLIN) != 0;
  event.disable();
  report.add("bytes_at_wakeup", static_cast<long long>(written));
  if (woken_below) {
    return report.decide(Verdict::kMisdelivered, "woken with " + std::to_string(written_below) + " bytes written, "
                                                 "below the watermark of " + std::to_string(kHighWatermark));
  }
  if (written <= kHighWatermark) {
    return report.decide(Verdict::kNoRecord, "the mappings' records reached " + std::to_string(written) +
                                                 " bytes, not past the watermark");
  }
  if (!woken) return report.decide(Verdict::kNoWakeup, "the records passed the watermark, no poller was woken");
  report.decide(Verdict::kDelivered, "woken once the records passed the watermark, not before");
}

}  // namespace sigwake
