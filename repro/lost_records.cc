// Records a ring could not take are told, not silently dropped: __perf_output_begin() in
// kernel/events/ring_buffer.c counts each in rb->lost (and the event's lost_samples, read with
// PERF_FORMAT_LOST), and the next record that lands is preceded by one PERF_RECORD_LOST with that count.
//  - lost_while_paused: PERF_EVENT_IOC_PAUSE_OUTPUT stops the ring taking records; the anonymous mappings
//    made while it is paused are dropped and counted, and after the ring resumes the next mapping's MMAP
//    record lands behind a LOST counting them. A kernel that wrote a paused ring, or dropped without
//    counting, fails here. A LOST record has no cpumode: its header.misc is 0.
//  - lost_without_id_sample: an event without sample_id_all (its sample_type still sizes an id sample) fills
//    its ring with MMAP records until one does not land; once the ring is read empty, the next mapping
//    leaves exactly a bare LOST record (header, id, count) and its MMAP, back to back: a kernel that reserved
//    room for the id sample it does not write leaves a hole the reader parses as a record.
//  - lost_without_data_pages: a ring that is its user page alone (as self-monitoring readers map it) is kept
//    paused by ring_buffer_init(): the mappings' records are neither written (data_head stays 0, nothing past
//    the page is touched) nor counted lost, having nowhere to go.
// The records are PERF_RECORD_MMAP of anonymous mappings (mmap_data): one per mmap(), in our own task.
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "lib/attrs.h"
#include "lib/evidence.h"
#include "lib/process.h"
#include "lib/records.h"
#include "lib/ring_buffer.h"
#include "lib/repro.h"

namespace sigwake {
namespace {

constexpr int kPaused = 5;             // mappings made while the ring is paused
constexpr int kDroppedAfterFull = 2;   // mappings beyond the first one a full ring did not take

// PERF_RECORD_LOST without an id sample: what the kernel writes for an event without sample_id_all.
struct BareLostRecord {
  perf_event_header header;
  std::uint64_t id, lost;
};
// With sample_id_all and PERF_SAMPLE_TID: the same, then pid and tid.
struct LostRecordWithTid {
  BareLostRecord bare;
  std::uint32_t pid, tid;
};

perf_event_attr anonymous_mappings(std::uint64_t sample_type, bool sample_id_all) {
  perf_event_attr attr = sideband_attr(sample_type);
  attr.sample_id_all = sample_id_all;
  attr.mmap_data = 1;
  attr.read_format = PERF_FORMAT_LOST;
  return attr;
}

bool first_is_lost(const RecordRead& read) {
  return !read.records.empty() && read.records[0].type == PERF_RECORD_LOST;
}

// The "lost" evidence: the LOST record's count, "malformed" for one not of its size, "none".
std::string lost_words(bool has_lost, bool whole, std::uint64_t count) {
  return whole ? std::to_string(count) : has_lost ? "malformed" : "none";
}

// What read() counts as lost (PERF_FORMAT_LOST: the count, then the lost samples).
std::uint64_t lost_samples(const PerfEvent& event) {
  std::uint64_t values[2] = {};
  check(read(event.fd(), values, sizeof values) == sizeof values, "read(PERF_FORMAT_LOST)");
  return values[1];
}

constexpr const char* kLostFormat = "119a784c8127 \"perf/core: Introduce PERF_FORMAT_LOST\" (v6.0) lets read() count "
                                    "them too";

}  // namespace

SIGWAKE_CASE(lost_while_paused,
             {.expected = {changed_at("6.0", "119a784c8127", Verdict::kUnsupported, Verdict::kMeasured,
                                      "__perf_output_begin() in kernel/events/ring_buffer.c counts a paused ring's "
                                      "records in rb->lost and lost_samples (PERF_EVENT_IOC_PAUSE_OUTPUT since "
                                      "86e7972f690c, v4.7) and puts a PERF_RECORD_LOST with that count before the "
                                      "next record; " + std::string(kLostFormat))},
              .defining = {"lost", "lost_samples", "after_resume"},
              .shown = {"lost", "lost_samples", "after_resume"},
              .kconfig = kPerfConfig}) {
  PerfEvent event = PerfEvent::open(anonymous_mappings(PERF_SAMPLE_TID, true), 0, -1);
  RingBuffer ring = RingBuffer::map(event.fd(), 0);
  event.enable();
  ring.consume();  // the ring's own mapping, an MMAP record too
  check(ioctl(event.fd(), PERF_EVENT_IOC_PAUSE_OUTPUT, 1) == 0, "ioctl(PERF_EVENT_IOC_PAUSE_OUTPUT, 1)");
  const std::uint64_t head_before = ring.head();
  for (int i = 0; i < kPaused; ++i) map_one_page();
  const std::uint64_t head_paused = ring.head() - head_before;
  check(ioctl(event.fd(), PERF_EVENT_IOC_PAUSE_OUTPUT, 0) == 0, "ioctl(PERF_EVENT_IOC_PAUSE_OUTPUT, 0)");
  const std::uint64_t after = map_one_page();
  event.disable();

  const std::uint64_t counted = lost_samples(event);
  const RecordRead read = ring.consume();
  LostRecordWithTid lost{};
  const bool has_lost = first_is_lost(read);
  const bool lost_whole = has_lost && record_as(read.records[0], PERF_RECORD_LOST, lost);
  report.add("lost", lost_words(has_lost, lost_whole, lost.bare.lost));
  report.add("lost_samples", static_cast<long long>(counted));
  report.add("after_resume", record_types(read));
  if (head_paused != 0) {
    return report.decide(Verdict::kMisdelivered, "the paused ring's data_head moved by " +
                                                     std::to_string(head_paused) + ": a paused ring took records");
  }
  if (count_mmaps_of(read, after) != 1) {
    return report.decide(Verdict::kNoRecord, "after the ring resumed, one more mapping left [" + record_types(read) +
                                                 "], no MMAP of its page");
  }
  if (has_lost && (!lost_whole || read.records.size() != 2 || lost.bare.header.misc != 0)) {
    return report.decide(Verdict::kMisdelivered, "after the ring resumed, one more mapping left [" +
                                                     record_types(read) + "], not a LOST (header misc 0) then its MMAP");
  }
  if (!has_lost || lost.bare.lost != kPaused || counted != kPaused || lost.bare.id != event.id()) {
    return report.decide(Verdict::kWrongCount,
                         std::to_string(kPaused) + " mappings made while paused were told as " +
                             (has_lost ? "a LOST of " + std::to_string(lost.bare.lost) : std::string("no LOST")) +
                             " and lost_samples " + std::to_string(counted));
  }
  report.decide(Verdict::kMeasured, "a paused ring took none of " + std::to_string(kPaused) + " records and "
                                    "told them as one LOST, and in lost_samples");
}

SIGWAKE_CASE(lost_without_id_sample,
             {.expected = {changed_at("6.0", "119a784c8127", Verdict::kUnsupported, Verdict::kMeasured,
                                      "__perf_output_begin() in kernel/events/ring_buffer.c counts the records a "
                                      "full ring drops in rb->lost and lost_samples, and sizes the LOST record it "
                                      "puts before the next record with an id sample only for sample_id_all, as "
                                      "perf_event__output_id_sample() writes one only then; " +
                                          std::string(kLostFormat))},
              .defining = {"lost", "lost_samples", "after_drained"},
              .shown = {"dropped", "lost", "lost_samples", "after_drained"},
              .kconfig = kPerfConfig}) {
  PerfEvent event = PerfEvent::open(anonymous_mappings(PERF_SAMPLE_TID | PERF_SAMPLE_TIME, false), 0, -1);
  RingBuffer ring = RingBuffer::map(event.fd(), 0);
  event.enable();
  const int most = static_cast<int>(ring_data_bytes(0) / sizeof(perf_event_header)) + kDroppedAfterFull;
  int mapped = 0, dropped = -1;  // once a mapping's record did not land: the mappings since
  while (dropped < kDroppedAfterFull) {
    if (++mapped > most) throw ReproError("the one-page ring never filled with MMAP records");
    const std::uint64_t before = ring.head();
    map_one_page();
    if (dropped >= 0 || ring.head() == before) ++dropped;
  }
  const RecordRead full = ring.consume();
  if (full.truncated) throw ReproError("the full ring held a truncated record");
  report.add("dropped", static_cast<long long>(dropped + 1));
  const std::uint64_t after = map_one_page();
  event.disable();

  const std::uint64_t counted = lost_samples(event);
  report.add("lost_samples", static_cast<long long>(counted));
  const RecordRead read = ring.consume();
  BareLostRecord lost{};
  const bool has_lost = first_is_lost(read);
  const bool lost_whole = has_lost && record_as(read.records[0], PERF_RECORD_LOST, lost);
  report.add("lost", lost_words(has_lost, lost_whole, lost.lost));
  report.add("after_drained", record_types(read));
  if (!has_lost) {
    return report.decide(Verdict::kWrongCount, std::to_string(dropped + 1) + " dropped records, and the ring read "
                                               "empty then held [" + record_types(read) + "], no bare LOST first");
  }
  if (!lost_whole || read.truncated || read.records.size() != 2 || count_mmaps_of(read, after) != 1 ||
      lost.header.misc != 0) {
    return report.decide(Verdict::kMisdelivered, "once the full ring was read empty, one more mapping left [" +
                                                     record_types(read) + "], not a bare LOST (header misc 0) then its MMAP");
  }
  const auto dropped_records = static_cast<std::uint64_t>(dropped + 1);
  if (lost.lost != dropped_records || counted != dropped_records || lost.id != event.id()) {
    return report.decide(Verdict::kWrongCount, "the LOST record counts " + std::to_string(lost.lost) + " for id " +
                                                   std::to_string(lost.id) + " and lost_samples " +
                                                   std::to_string(counted) + "; " + std::to_string(dropped_records) +
                                                   " were dropped by event " + std::to_string(event.id()));
  }
  report.decide(Verdict::kMeasured, "the " + std::to_string(dropped + 1) + " records a full ring dropped were told "
                                    "as one bare LOST record, the next MMAP right behind it");
}

SIGWAKE_CASE(lost_without_data_pages,
             {.expected = {changed_at("6.0", "119a784c8127", Verdict::kUnsupported, Verdict::kMeasured,
                                      "ring_buffer_init() in kernel/events/ring_buffer.c keeps a ring with no data "
                                      "pages paused, and __perf_output_begin() counts a paused ring's records lost "
                                      "only where it has pages; " + std::string(kLostFormat))},
              .defining = {"data_head", "lost_samples"},
              .shown = {"data_head", "lost_samples"},
              .kconfig = kPerfConfig}) {
  PerfEvent event = PerfEvent::open(anonymous_mappings(PERF_SAMPLE_TID, true), 0, -1);
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  void* user = mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_SHARED, event.fd(), 0);
  if (user == MAP_FAILED && errno == EPERM) throw Unsupported(errno_text("mmap of the user page (locked memory)"));
  check(user != MAP_FAILED, "mmap of the user page alone");
  struct Unmap {
    void* at;
    std::size_t length;
    ~Unmap() { munmap(at, length); }
  } unmap{user, page};
  for (int i = 0; i < kPaused; ++i) map_one_page();
  const auto* meta = static_cast<const perf_event_mmap_page*>(user);
  const std::uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
  const std::uint64_t counted = lost_samples(event);
  report.add("data_head", static_cast<long long>(head));
  report.add("lost_samples", static_cast<long long>(counted));
  if (head != 0) {
    return report.decide(Verdict::kMisdelivered, "a ring with no data pages moved its data_head to " +
                                                     std::to_string(head) + ": records were written past its page");
  }
  if (counted != 0) {
    return report.decide(Verdict::kWrongCount, std::to_string(counted) + " records counted lost by a ring with no "
                                                                         "data pages, which drops without counting");
  }
  report.decide(Verdict::kMeasured, "a ring of its user page alone took none of " + std::to_string(kPaused) +
                                        " records and counted none lost");
}

}  // namespace sigwake
