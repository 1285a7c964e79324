#include "ring_buffer.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <span>
#include <utility>

#include "errors.h"

namespace sigwake {

std::uint32_t ring_data_bytes(unsigned data_pages_log2) {
  return static_cast<std::uint32_t>(sysconf(_SC_PAGESIZE)) << data_pages_log2;
}

RingBuffer RingBuffer::map(int fd, unsigned data_pages_log2) {
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const std::size_t data_size = page << data_pages_log2;
  const std::size_t length = page + data_size;
  void* base = mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    // EPERM is the kernel's locked-memory policy (perf_event_mlock_kb,
    // RLIMIT_MEMLOCK); EINVAL or ENOMEM for a buffer we sized is our mistake.
    if (errno == EPERM) throw Unsupported(errno_text("mmap of the perf ring buffer (locked-memory limit)"));
    throw ReproError(errno_text("mmap of the perf ring buffer"));
  }
  return RingBuffer(base, length, data_size);
}

RingBuffer::RingBuffer(void* base, std::size_t length, std::size_t data_size)
    : base_(base), length_(length), data_size_(data_size), meta_(static_cast<perf_event_mmap_page*>(base)) {}

RingBuffer::RingBuffer(RingBuffer&& other) noexcept
    : base_(std::exchange(other.base_, nullptr)),
      length_(other.length_),
      data_size_(other.data_size_),
      meta_(std::exchange(other.meta_, nullptr)) {}

RingBuffer::~RingBuffer() {
  if (base_ != nullptr) munmap(base_, length_);
}

std::uint64_t RingBuffer::head() const { return __atomic_load_n(&meta_->data_head, __ATOMIC_ACQUIRE); }

RecordRead RingBuffer::read_between(std::uint64_t from, std::uint64_t to) const {
  // data_offset is 0 on kernels older than 4.1; the data then starts one page in.
  const std::size_t offset = meta_->data_offset != 0 ? meta_->data_offset : length_ - data_size_;
  std::span<const std::byte> data(static_cast<const std::byte*>(base_) + offset, data_size_);
  return read_records(data, from, to);
}

RecordRead RingBuffer::consume() {
  const std::uint64_t head_now = head();
  RecordRead read = read_between(meta_->data_tail, head_now);
  __atomic_store_n(&meta_->data_tail, head_now, __ATOMIC_RELEASE);
  return read;
}

RecordRead RingBuffer::consume_backward() {
  const std::uint64_t head_now = head();
  RecordRead read = read_between(head_now, meta_->data_tail);
  __atomic_store_n(&meta_->data_tail, head_now, __ATOMIC_RELEASE);
  return read;
}

}  // namespace sigwake
