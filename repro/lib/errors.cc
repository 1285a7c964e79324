#include "errors.h"

#include <cerrno>
#include <cstring>

namespace sigwake {

std::string errno_text(const std::string& what) {
  const int err = errno;
  return what + ": " + strerrorname_np(err) + " (" + std::strerror(err) + ")";
}

void check(bool ok, const std::string& what) {
  if (!ok) throw ReproError(errno_text(what));
}

}  // namespace sigwake
