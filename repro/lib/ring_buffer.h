// The mmap'd perf ring buffer: one metadata page plus 2^n data pages.
#pragma once

#include <linux/perf_event.h>

#include <cstddef>
#include <cstdint>

#include "records.h"

namespace sigwake {

// The bytes of 2^data_pages_log2 data pages on this machine.
std::uint32_t ring_data_bytes(unsigned data_pages_log2);

class RingBuffer {
 public:
  // Maps 1 + 2^data_pages_log2 pages of `fd` read-write (the consumer owns data_tail).
  // EPERM (the locked-memory budget) throws Unsupported; any other failure is ours.
  static RingBuffer map(int fd, unsigned data_pages_log2);

  RingBuffer(RingBuffer&& other) noexcept;
  RingBuffer(const RingBuffer&) = delete;
  RingBuffer& operator=(const RingBuffer&) = delete;
  RingBuffer& operator=(RingBuffer&&) = delete;
  ~RingBuffer();

  // The mapping itself, for cases about the mapping (a split of it).
  std::byte* base() const { return static_cast<std::byte*>(base_); }
  std::size_t length() const { return length_; }

  // data_head with acquire ordering: the records before it are visible after this load.
  std::uint64_t head() const;

  // Reads every record from data_tail to data_head, then releases them to the kernel.
  RecordRead consume();
  // The same for an event with write_backward, whose data_head moves down: the records from data_head (the
  // newest first) up to data_tail.
  RecordRead consume_backward();

 private:
  RingBuffer(void* base, std::size_t length, std::size_t data_size);
  RecordRead read_between(std::uint64_t from, std::uint64_t to) const;
  void* base_;
  std::size_t length_;
  std::size_t data_size_;
  perf_event_mmap_page* meta_;
};

}  // namespace sigwake
