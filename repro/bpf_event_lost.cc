// PERF_RECORD_BPF_EVENT behind a PERF_RECORD_LOST: a `bpf_event` event is told
// each BPF program load as one record (perf_event_bpf_output() in
// kernel/events/core.c). Once its ring was full, the first record that fits
// again is preceded by a LOST record counting the ones dropped
// (__perf_output_begin() in kernel/events/ring_buffer.c), which fills its id
// sample from the sample data it is handed.
//  - bpf_event_after_lost: a one-page ring is filled with load records until a
//    load's record does not land, three more are dropped, the ring is read
//    empty, and one more program loads. The ring must then hold exactly: LOST
//    counting the 4 dropped, then that program's BPF_EVENT with its id and tag.
//    Until eb81a2ed4f52 perf_event_bpf_output() handed its small BPF event
//    (not its sample data) to perf_output_begin(), so writing the LOST record
//    wrote the id sample's fields into it and the stack beyond it. With the
//    perf_sample_data layout of v6.3 on (`type` at offset 24) that is the
//    tag, which then reads as the sample_type: how the bug put back on 6.12
//    shows. With the older layout (5.1 to 6.2) the fields land past the event,
//    on the caller's stack: only KASAN or a crash tells, not this case.
#include <bpf/bpf.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "lib/attrs.h"
#include "lib/bpf_load.h"
#include "lib/evidence.h"
#include "lib/process.h"
#include "lib/repro.h"

namespace sigwake {
namespace {

constexpr int kDroppedAfterFull = 3;                 // loads beyond the first one that did not land
constexpr std::uint64_t kDropped = kDroppedAfterFull + 1;  // what the LOST record must count

// A BPF_EVENT record with sample_id_all and PERF_SAMPLE_TID: header, type, flags, id, tag, then pid and tid.
struct BpfEventRecord {
  perf_event_header header;
  std::uint16_t type;
  std::uint16_t flags;
  std::uint32_t id;
  std::uint8_t tag[BPF_TAG_SIZE];
  std::uint32_t pid, tid;
};
// A LOST record with the same id sample.
struct LostRecord {
  perf_event_header header;
  std::uint64_t id, lost;
  std::uint32_t pid, tid;
};

// One loaded program ("r0 = 0; exit"): its fd, id and tag.
struct Loaded {
  int fd = -1;
  bpf_prog_info info{};
};

Loaded load_program(Report& report) {
  const bpf_insn insns[] = {
      {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .src_reg = 0, .off = 0, .imm = 0},
      {.code = BPF_JMP | BPF_EXIT, .dst_reg = 0, .src_reg = 0, .off = 0, .imm = 0},
  };
  Loaded loaded;
  loaded.fd = bpf_prog_load(BPF_PROG_TYPE_RAW_TRACEPOINT, "lost_probe", "GPL", insns, 2, nullptr);
  if (loaded.fd < 0) throw_load_failure(report, -loaded.fd, BPF_PROG_TYPE_RAW_TRACEPOINT);
  __u32 length = sizeof loaded.info;
  check(bpf_obj_get_info_by_fd(loaded.fd, &loaded.info, &length) == 0, "BPF_OBJ_GET_INFO_BY_FD");
  return loaded;
}

std::string hex(const std::uint8_t* bytes, std::size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string text;
  for (std::size_t i = 0; i < n; ++i) text += {kDigits[bytes[i] >> 4], kDigits[bytes[i] & 15]};
  return text;
}

}  // namespace

SIGWAKE_CASE(bpf_event_after_lost,
             {.expected = {bpf_needs_privilege(),
                           fixed_by("eb81a2ed4f52", Verdict::kMisdelivered, Verdict::kMeasured,
                                    "eb81a2ed4f52 \"perf/core: Fix perf_output_begin parameter is incorrectly "
                                    "invoked in perf_event_bpf_output\" (stable 6.1.22, as Debian's changelogs "
                                    "place it; its upstream release is not confirmed here): "
                                    "perf_event_bpf_output() in kernel/events/core.c hands perf_output_begin() its "
                                    "sample data; before, its BPF event, which the LOST record's id sample "
                                    "overwrote: the tag with v6.3's perf_sample_data layout (as put back on "
                                    "6.12), the stack past it with 6.2's and older, which this case cannot see")
                               .backported({"6.1.22"})},
              .defining = {"lost", "after_lost"},
              .shown = {"loaded", "lost", "after_lost"},
              .kconfig = kBpfConfig}) {
  // Every program stays loaded until the case ends: an unload would be a record too. The first load,
  // before the event opens, lets libbpf load its feature probes then, not into the ring.
  std::vector<Loaded> programs;
  struct Closer {
    std::vector<Loaded>& programs;
    ~Closer() {
      for (const Loaded& p : programs) close(p.fd);
    }
  } closer{programs};
  programs.push_back(load_program(report));

  perf_event_attr attr = sideband_attr(PERF_SAMPLE_TID);
  attr.bpf_event = 1;
  PerfEvent event = PerfEvent::open(attr, 0, -1);
  RingBuffer ring = RingBuffer::map(event.fd(), 0);

  const std::size_t most = ring_data_bytes(0) / sizeof(BpfEventRecord) + kDroppedAfterFull + 2;
  rlimit files{};
  check(getrlimit(RLIMIT_NOFILE, &files) == 0, "getrlimit");
  if (files.rlim_cur < most + 64) {
    if (files.rlim_max < most + 64) {
      throw ReproError("RLIMIT_NOFILE's hard limit " + std::to_string(files.rlim_max) + " is short of the " +
                       std::to_string(most + 64) + " files this ring's loads may keep open");
    }
    files.rlim_cur = files.rlim_max;
    check(setrlimit(RLIMIT_NOFILE, &files) == 0, "setrlimit");
  }

  int dropped = -1;  // once a load's record did not land: the loads since
  while (dropped < kDroppedAfterFull) {
    if (programs.size() >= most) throw ReproError("the one-page ring never filled with BPF_EVENT records");
    const std::uint64_t before = ring.head();
    programs.push_back(load_program(report));
    if (dropped >= 0 || ring.head() == before) ++dropped;
  }
  const std::size_t landed = programs.size() - 1 - kDropped;
  report.add("loaded", static_cast<long long>(programs.size()));
  const RecordRead full = ring.consume();
  if (full.truncated) throw ReproError("the full ring held a truncated record");
  if (full.records.size() != landed) {
    throw ReproError("the full ring held " + std::to_string(full.records.size()) + " records, not the " +
                     std::to_string(landed) + " loads whose head moved");
  }

  programs.push_back(load_program(report));
  const Loaded& last = programs.back();
  const RecordRead read = ring.consume();
  if (read.truncated) throw ReproError("the ring held a truncated record");
  LostRecord lost{};
  BpfEventRecord told{};
  const bool has_lost = !read.records.empty() && record_as(read.records[0], PERF_RECORD_LOST, lost);
  const bool has_told = read.records.size() == 2 && record_as(read.records[1], PERF_RECORD_BPF_EVENT, told);
  report.add("lost", has_lost ? std::to_string(lost.lost) : "none");
  if (!has_lost || !has_told) {
    const std::string seen = record_types(read);
    report.add("after_lost", seen);
    return report.decide(has_lost ? Verdict::kNoRecord : Verdict::kWrongCount,
                         "after " + std::to_string(kDropped) + " loads were dropped and the ring read empty, one "
                         "more load left [" + seen + "], not LOST then its BPF_EVENT");
  }
  // What the BPF_EVENT names, as a word that does not depend on how many programs the boot loaded before.
  const auto ours = [](std::uint32_t pid, std::uint32_t tid) {
    return pid == static_cast<std::uint32_t>(getpid()) && tid == static_cast<std::uint32_t>(gettid());
  };
  const char* named = "its program";
  if (told.type != PERF_BPF_EVENT_PROG_LOAD) {
    named = "not a load";
  } else if (told.id != last.info.id) {
    named = "another id";
  } else if (std::memcmp(told.tag, last.info.tag, BPF_TAG_SIZE) != 0) {
    named = "another tag";
  } else if (!ours(told.pid, told.tid) || !ours(lost.pid, lost.tid)) {
    named = "another task";
  }
  report.add("after_lost", named);
  if (std::string_view(named) != "its program") {
    return report.decide(Verdict::kMisdelivered,
                         "the BPF_EVENT behind the LOST record names id " + std::to_string(told.id) + " tag " +
                             hex(told.tag, BPF_TAG_SIZE) + " for pid/tid " + std::to_string(told.pid) + "/" +
                             std::to_string(told.tid) + " (LOST's " + std::to_string(lost.pid) + "/" +
                             std::to_string(lost.tid) + "); the program loaded is id " + std::to_string(last.info.id) +
                             " tag " + hex(last.info.tag, BPF_TAG_SIZE) + ", ours " + std::to_string(getpid()) + "/" +
                             std::to_string(gettid()));
  }
  if (lost.lost != kDropped || lost.id != event.id()) {
    return report.decide(Verdict::kWrongCount, "the LOST record counts " + std::to_string(lost.lost) + " dropped (" +
                                                   std::to_string(kDropped) + " were) for event id " +
                                                   std::to_string(lost.id) + " (ours is " +
                                                   std::to_string(event.id()) + ")");
  }
  report.decide(Verdict::kMeasured, "a full ring's " + std::to_string(kDropped) + " dropped loads were told as one "
                                    "LOST record, then the next load's BPF_EVENT named its program's id and tag");
}

}  // namespace sigwake
