// The ring-buffer parser on synthetic buffers.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "../lib/records.h"

namespace sigwake {
namespace {

// A ring data area the size of `size`, written at `position` with wrap-around.
class SyntheticRing {
 public:
  explicit SyntheticRing(std::size_t size) : data_(size) {}
  void write(std::uint64_t position, const void* bytes, std::size_t length) {
    for (std::size_t i = 0; i < length; ++i) {
      data_[(position + i) % data_.size()] = static_cast<const std::byte*>(bytes)[i];
    }
  }
  // Appends a record with `body_bytes` of body, filled with `fill`; returns its size.
  std::uint16_t append(std::uint64_t& head, std::uint32_t type, std::uint16_t misc, std::size_t body_bytes,
                       unsigned char fill = 0xAB) {
    perf_event_header header{type, misc, static_cast<std::uint16_t>(sizeof(perf_event_header) + body_bytes)};
    write(head, &header, sizeof header);
    std::vector<unsigned char> body(body_bytes, fill);
    write(head + sizeof header, body.data(), body.size());
    head += header.size;
    return header.size;
  }
  std::span<const std::byte> data() const { return data_; }

 private:
  std::vector<std::byte> data_;
};

TEST(ReadRecords, EmptyRangeHasNoRecords) {
  SyntheticRing ring(64);
  const RecordRead read = read_records(ring.data(), 16, 16);
  EXPECT_TRUE(read.records.empty());
  EXPECT_FALSE(read.truncated);
}

TEST(ReadRecords, ReadsRecordsInOrder) {
  SyntheticRing ring(256);
  std::uint64_t head = 0;
  ring.append(head, PERF_RECORD_SWITCH, 0, 0);
  ring.append(head, PERF_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT, 0);
  ring.append(head, PERF_RECORD_LOST, 0, 16);
  const RecordRead read = read_records(ring.data(), 0, head);
  ASSERT_EQ(read.records.size(), 3u);
  EXPECT_FALSE(parse_switch(read.records[0])->out);
  EXPECT_TRUE(parse_switch(read.records[1])->out);
  EXPECT_EQ(read.records[2].type, static_cast<std::uint32_t>(PERF_RECORD_LOST));
  EXPECT_FALSE(parse_switch(read.records[2]).has_value());
  EXPECT_FALSE(read.truncated);
}

TEST(ReadRecords, UndoesWrapAroundInsideARecord) {
  SyntheticRing ring(64);
  std::uint64_t head = 56;  // a 24-byte record starting 8 bytes before the end
  ring.append(head, PERF_RECORD_LOST, 0, 16, 0x5A);
  const RecordRead read = read_records(ring.data(), 56, head);
  ASSERT_EQ(read.records.size(), 1u);
  ASSERT_EQ(read.records[0].bytes.size(), 24u);
  for (std::size_t i = sizeof(perf_event_header); i < 24; ++i) {
    EXPECT_EQ(read.records[0].bytes[i], std::byte{0x5A}) << "byte " << i;
  }
}

TEST(ReadRecords, HeaderSplitAcrossTheEndAfterManyLaps) {
  SyntheticRing ring(64);
  std::uint64_t head = 64 * 1000 + 60;  // positions are free-running, far past the size
  const std::uint64_t tail = head;
  ring.append(head, PERF_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT, 8);
  const RecordRead read = read_records(ring.data(), tail, head);
  ASSERT_EQ(read.records.size(), 1u);
  EXPECT_TRUE(parse_switch(read.records[0])->out);
}

TEST(ReadRecords, ABackwardRingIsReadFromItsHeadBelowZero) {
  SyntheticRing ring(64);
  std::uint64_t head = static_cast<std::uint64_t>(-32);  // a write_backward ring 32 bytes down from 0
  const std::uint64_t newest = head;
  ring.append(head, PERF_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT, 8);
  ring.append(head, PERF_RECORD_SWITCH, 0, 8);
  ASSERT_EQ(head, 0u);
  const RecordRead read = read_records(ring.data(), newest, 0);
  ASSERT_EQ(read.records.size(), 2u);
  EXPECT_TRUE(parse_switch(read.records[0])->out);
  EXPECT_FALSE(read.truncated);
}

TEST(ReadRecords, MoreThanTheRingBetweenTailAndHeadIsTruncation) {
  SyntheticRing ring(64);
  std::uint64_t head = 0;
  ring.append(head, PERF_RECORD_SWITCH, 0, 0);
  const RecordRead read = read_records(ring.data(), 16, 8);  // a tail past the head: no ring a kernel left
  EXPECT_TRUE(read.records.empty());
  EXPECT_TRUE(read.truncated);
}

TEST(ReadRecords, TruncatedRecordStopsTheRead) {
  SyntheticRing ring(128);
  std::uint64_t head = 0;
  ring.append(head, PERF_RECORD_SWITCH, 0, 0);
  const std::uint16_t size = ring.append(head, PERF_RECORD_LOST, 0, 32);
  // head claims only part of the second record.
  const RecordRead read = read_records(ring.data(), 0, head - size / 2);
  EXPECT_EQ(read.records.size(), 1u);
  EXPECT_TRUE(read.truncated);
}

TEST(ReadRecords, HeaderSmallerThanAHeaderIsTruncation) {
  SyntheticRing ring(64);
  perf_event_header bogus{PERF_RECORD_SWITCH, 0, 4};
  ring.write(0, &bogus, sizeof bogus);
  const RecordRead read = read_records(ring.data(), 0, 32);
  EXPECT_TRUE(read.records.empty());
  EXPECT_TRUE(read.truncated);
}

// A Record holding exactly the bytes of `raw`, as read_records would copy it out.
template <typename Raw>
Record record_of(const Raw& raw) {
  Record record{raw.header.type, raw.header.misc, std::vector<std::byte>(sizeof raw)};
  std::memcpy(record.bytes.data(), &raw, sizeof raw);
  return record;
}

TEST(ParseMmap, ReadsFieldsAndFilename) {
  struct {
    perf_event_header header;
    std::uint32_t pid, tid;
    std::uint64_t addr, len, pgoff;
    char filename[16];
  } raw{{PERF_RECORD_MMAP, 0, sizeof raw}, 10, 11, 0x7000, 0x2000, 3, "//anon"};
  const auto mmap = parse_mmap(record_of(raw));
  ASSERT_TRUE(mmap.has_value());
  EXPECT_EQ(mmap->pid, 10u);
  EXPECT_EQ(mmap->tid, 11u);
  EXPECT_EQ(mmap->addr, 0x7000u);
  EXPECT_EQ(mmap->len, 0x2000u);
  EXPECT_EQ(mmap->pgoff, 3u);
  EXPECT_EQ(mmap->filename, "//anon");
}

TEST(ParseMmap2, ReadsTheDeviceInodeAndNameAndRefusesABuildId) {
  struct {
    perf_event_header header;
    std::uint32_t pid, tid;
    std::uint64_t addr, len, pgoff;
    std::uint32_t maj, min;
    std::uint64_t ino, ino_generation;
    std::uint32_t prot, flags;
    char filename[16];
  } raw{{PERF_RECORD_MMAP2, 0, sizeof raw}, 10, 11, 0x7000, 0x1000, 0, 0, 0x2b, 42, 0, 1, 2, "/merged/file"};
  const auto mmap = parse_mmap2(record_of(raw));
  ASSERT_TRUE(mmap.has_value());
  EXPECT_EQ(mmap->mapping.tid, 11u);
  EXPECT_EQ(mmap->mapping.addr, 0x7000u);
  EXPECT_EQ(mmap->maj, 0u);
  EXPECT_EQ(mmap->min, 0x2bu);
  EXPECT_EQ(mmap->ino, 42u);
  EXPECT_EQ(mmap->mapping.filename, "/merged/file");
  EXPECT_FALSE(parse_mmap(record_of(raw)).has_value());
  raw.header.misc = PERF_RECORD_MISC_MMAP_BUILD_ID;  // the same bytes hold a build id, not a device
  EXPECT_FALSE(parse_mmap2(record_of(raw)).has_value());
}

TEST(ParseSample, ReadsIpAndTid) {
  struct {
    perf_event_header header;
    std::uint64_t ip;
    std::uint32_t pid, tid;
  } raw{{PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, sizeof raw}, 0xdeadbeef, 42, 43};
  const Record record = record_of(raw);
  const auto sample = parse_ip_tid_sample(record);
  ASSERT_TRUE(sample.has_value());
  EXPECT_EQ(sample->ip, 0xdeadbeefu);
  EXPECT_EQ(sample->pid, 42u);
  EXPECT_EQ(sample->tid, 43u);
  EXPECT_FALSE(parse_mmap(record).has_value());
}

TEST(ParseSample, ReadsAGroupsCountsInOrderAndRefusesAMiscount) {
  struct {
    perf_event_header header;
    std::uint64_t ip;
    std::uint32_t pid, tid;
    std::uint64_t nr, leader, sibling;
  } raw{{PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, sizeof raw}, 0x1000, 7, 7, 2, 5000, 4000};
  const auto counts = parse_group_read_sample(record_of(raw));
  ASSERT_TRUE(counts.has_value());
  EXPECT_EQ(*counts, (std::vector<std::uint64_t>{5000, 4000}));
  raw.nr = 3;  // more members than the record holds
  EXPECT_FALSE(parse_group_read_sample(record_of(raw)).has_value());
}

TEST(ParseSample, CountsSamplesOfOneFaultAndRefusesAnyOtherRecord) {
  struct {
    perf_event_header header;
    std::uint64_t addr;
  } raw{{PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, sizeof raw}, 0x7000};
  RecordRead read{{record_of(raw), record_of(raw)}};
  EXPECT_EQ(samples_of_fault(read, 0x7000), 2);
  EXPECT_EQ(samples_of_fault(read, 0x8000), -1);  // another fault's
  EXPECT_EQ(samples_of_fault(RecordRead{}, 0x7000), 0);
  raw.header.type = PERF_RECORD_LOST;
  read.records.push_back(record_of(raw));
  EXPECT_EQ(samples_of_fault(read, 0x7000), -1);  // a record that is no sample
}

TEST(ReadRecords, TheStreamIdIsARecordsLastEightBytes) {
  // A sample with IP, TID, ID, STREAM_ID: its last field names the event that wrote it.
  Record sample{PERF_RECORD_SAMPLE, 0, std::vector<std::byte>(sizeof(perf_event_header) + 32)};
  const std::uint64_t writer = 0x1234567890ULL;
  std::memcpy(sample.bytes.data() + sample.bytes.size() - 8, &writer, 8);
  EXPECT_EQ(trailing_stream_id(sample), writer);
  Record empty{PERF_RECORD_SAMPLE, 0, std::vector<std::byte>(sizeof(perf_event_header))};
  EXPECT_FALSE(trailing_stream_id(empty).has_value());
}

}  // namespace
}  // namespace sigwake
