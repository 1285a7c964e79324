// perf ring-buffer records: headers and the bodies sigwake looks at.
#pragma once

#include <linux/perf_event.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace sigwake {

struct Record {
  std::uint32_t type = 0;
  std::uint16_t misc = 0;
  std::vector<std::byte> bytes;  // the whole record, header included, unwrapped
};

// Records between tail and head of a ring's data area (a power-of-two size),
// copied out in order with wrap-around undone. Positions are modular: a
// write_backward ring is read from its data_head up to its data_tail. More
// than the ring between them reads as truncated.
struct RecordRead {
  std::vector<Record> records;
  bool truncated = false;  // a header claimed more bytes than head allows, or fewer than a header
};
RecordRead read_records(std::span<const std::byte> data, std::uint64_t tail, std::uint64_t head);

struct SwitchRecord {
  bool out = false;      // PERF_RECORD_MISC_SWITCH_OUT
  bool preempt = false;  // PERF_RECORD_MISC_SWITCH_OUT_PREEMPT
};
std::optional<SwitchRecord> parse_switch(const Record& record);

struct MmapRecord {
  std::uint32_t pid = 0, tid = 0;
  std::uint64_t addr = 0, len = 0, pgoff = 0;
  std::string filename;
};
std::optional<MmapRecord> parse_mmap(const Record& record);

// A PERF_RECORD_MMAP2 that names its file's device and inode (not a build id: attr.build_id unset).
struct Mmap2Record {
  MmapRecord mapping;
  std::uint32_t maj = 0, min = 0;
  std::uint64_t ino = 0;
};
std::optional<Mmap2Record> parse_mmap2(const Record& record);

// How many PERF_RECORD_MMAPs in `read` are of the mapping at `address` (by thread `tid`, unless 0).
int count_mmaps_of(const RecordRead& read, std::uint64_t address, std::uint32_t tid = 0);

// A PERF_RECORD_SAMPLE whose sample_type is exactly PERF_SAMPLE_IP | PERF_SAMPLE_TID.
struct IpTidSample {
  std::uint64_t ip = 0;
  std::uint32_t pid = 0, tid = 0;
};
std::optional<IpTidSample> parse_ip_tid_sample(const Record& record);

// How many of `read`'s records are samples of a fault at `address` whose sample_type is exactly
// PERF_SAMPLE_ADDR; -1 if any record is something else.
int samples_of_fault(const RecordRead& read, std::uint64_t address);

// The group's counts in a PERF_RECORD_SAMPLE whose sample_type is exactly PERF_SAMPLE_IP | PERF_SAMPLE_TID |
// PERF_SAMPLE_READ and read_format exactly PERF_FORMAT_GROUP: the leader's first, then each sibling's.
std::optional<std::vector<std::uint64_t>> parse_group_read_sample(const Record& record);

// The last 8 bytes of a record: its PERF_SAMPLE_STREAM_ID, where the event's sample_type ends with it (a
// sample's last field, or with sample_id_all the last of a non-sample record's sample_id trailer). The
// kernel writes there the id of the event that wrote the record (an inherited child's own id; PERF_SAMPLE_ID
// says its parent's).
std::optional<std::uint64_t> trailing_stream_id(const Record& record);

// A record of `type` whose size is exactly T's, copied into `out`: false for any other.
template <typename T>
bool record_as(const Record& record, std::uint32_t type, T& out) {
  if (record.type != type || record.bytes.size() != sizeof(T)) return false;
  std::memcpy(&out, record.bytes.data(), sizeof(T));
  return true;
}

const char* record_type_name(std::uint32_t type);
// The types of `read`'s records in order, "MMAP,LOST" ("nothing" for none; ",truncated" if it was).
std::string record_types(const RecordRead& read);

}  // namespace sigwake
