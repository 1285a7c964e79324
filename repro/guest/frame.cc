#include "frame.h"

#include <unistd.h>

#include <array>
#include <cstdio>

namespace sigwake {
namespace {

constexpr std::array<std::uint32_t, 256> make_crc_table() {
  std::array<std::uint32_t, 256> table{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int bit = 0; bit < 8; ++bit) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
    table[i] = c;
  }
  return table;
}

constexpr auto kCrcTable = make_crc_table();

}  // namespace

std::uint32_t crc32(std::string_view bytes) {
  std::uint32_t c = 0xFFFFFFFFu;
  for (unsigned char b : bytes) c = kCrcTable[(c ^ b) & 0xFF] ^ (c >> 8);
  return c ^ 0xFFFFFFFFu;
}

std::string Framer::frame(std::string_view payload) {
  const std::string seq = std::to_string(seq_++);
  const std::string text(payload);
  char crc[9];
  std::snprintf(crc, sizeof crc, "%08x", crc32(token_ + " " + seq + " " + text));
  return "SIGWAKE " + token_ + " " + seq + " " + crc + " " + text + "\n";
}

void FramedWriter::operator()(const std::string& payload) {
  const std::string framed = framer_.frame(payload);
  (void)!write(fd_, framed.data(), framed.size());
}

}  // namespace sigwake
