// The mmap'd perf ring buffer: one metadata page plus 2^n data pages.
#pragma once

#include <linux/perf_event.h>

#include <cstdint>

#include "records.h"

namespace sigwake {

class RingBuffer {
 public:
  // Maps 1 + 2^data_pages_log2 pages of `fd` read-write (the consumer owns data_tail).
  // A kernel refusal (EPERM from the mlock budget, EINVAL) throws Unsupported.
  static RingBuffer map(int fd, unsigned data_pages_log2);

  RingBuffer(RingBuffer&& other) noexcept;
  RingBuffer(const RingBuffer&) = delete;
  RingBuffer& operator=(const RingBuffer&) = delete;
  RingBuffer& operator=(RingBuffer&&) = delete;
  ~RingBuffer();

  // data_head with acquire ordering: the records before it are visible after this load.
  std::uint64_t head() const;

  // Reads every record from data_tail to data_head, then releases them to the kernel.
  RecordRead consume();

  const perf_event_mmap_page& meta() const { return *meta_; }

 private:
  RingBuffer(void* base, std::size_t length, std::size_t data_size);
  void* base_;
  std::size_t length_;
  std::size_t data_size_;
  perf_event_mmap_page* meta_;
};

}  // namespace sigwake
