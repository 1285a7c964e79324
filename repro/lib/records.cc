#include "records.h"

#include <cstring>

namespace sigwake {
namespace {

template <typename T>
T load(const Record& record, std::size_t offset) {
  T value{};
  std::memcpy(&value, record.bytes.data() + offset, sizeof value);
  return value;
}

}  // namespace

RecordRead read_records(std::span<const std::byte> data, std::uint64_t tail, std::uint64_t head) {
  RecordRead out;
  const std::uint64_t mask = data.size() - 1;
  auto copy_out = [&](std::uint64_t pos, std::size_t len, std::byte* dst) {
    for (std::size_t i = 0; i < len; ++i) dst[i] = data[(pos + i) & mask];
  };
  // Positions only grow apart by what the kernel wrote (a backward ring's head is below its tail, in modular
  // arithmetic): more than the whole ring between them is no ring a kernel left.
  if (head - tail > data.size()) {
    out.truncated = true;
    return out;
  }
  while (tail != head) {
    perf_event_header header{};
    if (head - tail < sizeof header) {
      out.truncated = true;
      break;
    }
    copy_out(tail, sizeof header, reinterpret_cast<std::byte*>(&header));
    if (header.size < sizeof header || header.size > head - tail || header.size > data.size()) {
      out.truncated = true;
      break;
    }
    Record record{header.type, header.misc, std::vector<std::byte>(header.size)};
    copy_out(tail, header.size, record.bytes.data());
    out.records.push_back(std::move(record));
    tail += header.size;
  }
  return out;
}

std::optional<SwitchRecord> parse_switch(const Record& record) {
  if (record.type != PERF_RECORD_SWITCH && record.type != PERF_RECORD_SWITCH_CPU_WIDE) return std::nullopt;
  return SwitchRecord{(record.misc & PERF_RECORD_MISC_SWITCH_OUT) != 0,
                      (record.misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT) != 0};
}

std::optional<MmapRecord> parse_mmap(const Record& record) {
  constexpr std::size_t fixed = sizeof(perf_event_header) + 2 * 4 + 3 * 8;
  if (record.type != PERF_RECORD_MMAP || record.bytes.size() <= fixed) return std::nullopt;
  MmapRecord mmap;
  std::size_t at = sizeof(perf_event_header);
  mmap.pid = load<std::uint32_t>(record, at);
  mmap.tid = load<std::uint32_t>(record, at + 4);
  mmap.addr = load<std::uint64_t>(record, at + 8);
  mmap.len = load<std::uint64_t>(record, at + 16);
  mmap.pgoff = load<std::uint64_t>(record, at + 24);
  const char* name = reinterpret_cast<const char*>(record.bytes.data() + fixed);
  mmap.filename.assign(name, strnlen(name, record.bytes.size() - fixed));
  return mmap;
}

std::optional<Mmap2Record> parse_mmap2(const Record& record) {
  constexpr std::size_t at = sizeof(perf_event_header);
  constexpr std::size_t fixed = at + 2 * 4 + 3 * 8 + 2 * 4 + 2 * 8 + 2 * 4;  // ... maj, min, ino, ino_gen, prot, flags
  if (record.type != PERF_RECORD_MMAP2 || (record.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) ||
      record.bytes.size() <= fixed) {
    return std::nullopt;
  }
  Mmap2Record mmap;
  mmap.mapping.pid = load<std::uint32_t>(record, at);
  mmap.mapping.tid = load<std::uint32_t>(record, at + 4);
  mmap.mapping.addr = load<std::uint64_t>(record, at + 8);
  mmap.mapping.len = load<std::uint64_t>(record, at + 16);
  mmap.mapping.pgoff = load<std::uint64_t>(record, at + 24);
  mmap.maj = load<std::uint32_t>(record, at + 32);
  mmap.min = load<std::uint32_t>(record, at + 36);
  mmap.ino = load<std::uint64_t>(record, at + 40);
  const char* name = reinterpret_cast<const char*>(record.bytes.data() + fixed);
  mmap.mapping.filename.assign(name, strnlen(name, record.bytes.size() - fixed));
  return mmap;
}

std::optional<IpTidSample> parse_ip_tid_sample(const Record& record) {
  if (record.type != PERF_RECORD_SAMPLE || record.bytes.size() < sizeof(perf_event_header) + 16) return std::nullopt;
  const std::size_t at = sizeof(perf_event_header);
  return IpTidSample{load<std::uint64_t>(record, at), load<std::uint32_t>(record, at + 8),
                     load<std::uint32_t>(record, at + 12)};
}

std::optional<std::vector<std::uint64_t>> parse_group_read_sample(const Record& record) {
  const std::size_t at = sizeof(perf_event_header) + 16;  // past ip, pid and tid
  if (record.type != PERF_RECORD_SAMPLE || record.bytes.size() < at + 8) return std::nullopt;
  const std::uint64_t members = load<std::uint64_t>(record, at);
  if (record.bytes.size() != at + 8 * (1 + members)) return std::nullopt;
  std::vector<std::uint64_t> counts;
  for (std::uint64_t i = 0; i < members; ++i) counts.push_back(load<std::uint64_t>(record, at + 8 * (1 + i)));
  return counts;
}

std::optional<std::uint64_t> trailing_stream_id(const Record& record) {
  if (record.bytes.size() < sizeof(perf_event_header) + sizeof(std::uint64_t)) return std::nullopt;
  return load<std::uint64_t>(record, record.bytes.size() - sizeof(std::uint64_t));
}

int count_mmaps_of(const RecordRead& read, std::uint64_t address, std::uint32_t tid) {
  int found = 0;
  for (const Record& record : read.records) {
    const auto mmap = parse_mmap(record);
    found += mmap && mmap->addr == address && (tid == 0 || mmap->tid == tid);
  }
  return found;
}

int samples_of_fault(const RecordRead& read, std::uint64_t address) {
  struct AddrSample {
    perf_event_header header;
    std::uint64_t addr;
  };
  int samples = 0;
  for (const Record& record : read.records) {
    AddrSample sample{};
    if (!record_as(record, PERF_RECORD_SAMPLE, sample) || sample.addr != address) return -1;
    ++samples;
  }
  return samples;
}

const char* record_type_name(std::uint32_t type) {
  switch (type) {
    case PERF_RECORD_MMAP: return "MMAP";
    case PERF_RECORD_LOST: return "LOST";
    case PERF_RECORD_COMM: return "COMM";
    case PERF_RECORD_EXIT: return "EXIT";
    case PERF_RECORD_FORK: return "FORK";
    case PERF_RECORD_SAMPLE: return "SAMPLE";
    case PERF_RECORD_MMAP2: return "MMAP2";
    case PERF_RECORD_SWITCH: return "SWITCH";
    case PERF_RECORD_SWITCH_CPU_WIDE: return "SWITCH_CPU_WIDE";
    default: return "OTHER";
  }
}

std::string record_types(const RecordRead& read) {
  std::string seen;
  for (const Record& record : read.records) seen += std::string(seen.empty() ? "" : ",") + record_type_name(record.type);
  return (seen.empty() ? "nothing" : seen) + (read.truncated ? ",truncated" : "");
}

}  // namespace sigwake
