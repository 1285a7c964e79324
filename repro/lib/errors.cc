#include "errors.h"

#include <cerrno>
#include <cstring>

namespace sigwake {

std::string errno_name(int err) {
  const char* name = strerrorname_np(err);
  return name != nullptr ? name : "errno:" + std::to_string(err);
}

std::string errno_text(const std::string& what) {
  const int err = errno;
  return what + ": " + errno_name(err) + " (" + std::strerror(err) + ")";
}

void check(bool ok, const std::string& what) {
  if (!ok) throw ReproError(errno_text(what));
}

}  // namespace sigwake
