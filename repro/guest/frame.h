// Framing of the guest's results on the serial console. Every line the init
// writes is `SIGWAKE <token> <seq> <crc32> <payload>`: the per-boot token comes
// from the kernel command line, seq counts from 0 and the CRC-32 covers
// "<token> <seq> <payload>". Kernel printk lines, torn lines and anything a
// reproducer prints (it only ever reaches the console through the init, as
// payload) can neither be read as a result nor forge one.
// harness/sigwake/console.py reads this format.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace sigwake {

std::uint32_t crc32(std::string_view bytes);

class Framer {
 public:
  explicit Framer(std::string token) : token_(std::move(token)) {}
  std::string frame(std::string_view payload);  // one framed line, newline included

 private:
  std::string token_;
  unsigned seq_ = 0;
};

}  // namespace sigwake
