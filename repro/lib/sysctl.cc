#include "sysctl.h"

#include <cerrno>
#include <fstream>

#include "errors.h"

namespace sigwake {
namespace {

std::string path_of(const std::string& name) { return "/proc/sys/" + name; }

bool write_sysctl(const std::string& name, long value) {
  std::ofstream sysctl(path_of(name));
  sysctl << value << std::flush;
  return static_cast<bool>(sysctl);
}

}  // namespace

long read_sysctl(const std::string& name) {
  long value = -1;
  std::ifstream(path_of(name)) >> value;
  if (value < 0) throw ReproError("cannot read " + path_of(name));
  return value;
}

SysctlFor::SysctlFor(std::string name, long value) : name_(std::move(name)), old_(read_sysctl(name_)) {
  if (!write_sysctl(name_, value)) throw Unsupported(errno_text("writing " + path_of(name_)));
}

SysctlFor::~SysctlFor() { write_sysctl(name_, old_); }

}  // namespace sigwake
