// A stand-in reproducer whose cases make the kernel report through lkdtm
// (drivers/misc/lkdtm, CONFIG_LKDTM): a WARNING, then a BUG (an Oops that kills
// this process but not the kernel), then a panic (which ends the boot), then a
// case that shows the runs went on (in a fresh boot).
// Each case that survives says `delivered`, so only the kernel's report can fail it.
#include <fcntl.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

namespace {

constexpr const char* kDirect = "/sys/kernel/debug/provoke-crash/DIRECT";
constexpr const char* kCases[] = {"provoke_warning", "provoke_bug", "provoke_panic", "provoke_after"};

int report(const std::string& name, const char* verdict, const std::string& reason) {
  std::printf("KTAP version 1\n1..1\n# verdict=%s\n", verdict);
  if (!reason.empty()) std::printf("# reason=%s\n", reason.c_str());
  const bool skip = std::strcmp(verdict, "unsupported") == 0;
  std::printf("ok 1 %s%s\n", name.c_str(), skip ? " # SKIP" : "");
  std::fflush(stdout);
  return skip ? 4 : 0;
}

int provoke(const std::string& name, const char* what) {
  mount("debugfs", "/sys/kernel/debug", "debugfs", 0, nullptr);  // EBUSY once mounted
  const int fd = open(kDirect, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return report(name, "unsupported", std::string("no ") + kDirect + ": " + std::strerror(errno));
  std::fflush(stdout);
  if (write(fd, what, std::strlen(what)) < 0) return report(name, "unsupported", std::strerror(errno));
  close(fd);
  return report(name, "delivered", "");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "--list") == 0) {
    for (const char* name : kCases) std::printf("%s CAP_SYS_ADMIN\n", name);  // granted: it mounts debugfs
    return 0;
  }
  if (argc != 3 || std::strcmp(argv[1], "--case") != 0) return 2;
  const std::string name = argv[2];
  if (name == "provoke_warning") return provoke(name, "WARNING");
  if (name == "provoke_bug") return provoke(name, "BUG");
  if (name == "provoke_panic") return provoke(name, "PANIC");
  if (name == "provoke_after") return report(name, "delivered", "");
  return 2;
}
