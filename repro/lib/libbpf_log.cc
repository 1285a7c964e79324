#include "libbpf_log.h"

#include <bpf/libbpf.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>

namespace sigwake {
namespace {

std::string g_log;  // one process, one libbpf: its print callback takes no context

int keep(libbpf_print_level, const char* format, va_list args) {
  char line[1024];
  std::vsnprintf(line, sizeof line, format, args);
  g_log += line;
  return 0;
}

}  // namespace

void keep_libbpf_log() { libbpf_set_print(keep); }

std::string libbpf_log_tail(std::size_t most) {
  std::string tail = g_log.substr(g_log.size() > most ? g_log.size() - most : 0);
  std::replace(tail.begin(), tail.end(), '\n', ' ');
  return tail;
}

}  // namespace sigwake
