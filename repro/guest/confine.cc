#include "confine.h"

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace sigwake {
namespace {

// What cases open under /dev: the rest (console, ttyS*, hvc*, kmsg, mem, port) is not there.
constexpr const char* kDevices[] = {"null", "zero", "full", "random", "urandom", "uinput", "input"};
// What cases set for their own time (sample_throttle, memlock_budget): the rest of /proc/sys is read-only.
constexpr const char* kWritableSysctls[] = {"/proc/sys/kernel/perf_event_max_sample_rate",
                                            "/proc/sys/kernel/perf_event_mlock_kb"};
constexpr unsigned long kSealed = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC;

std::string failed(const std::string& what) { return what + ": " + std::strerror(errno); }

// `path` (and, with MS_REC in `bind`, what is mounted below it) bound onto itself, then made read-only there:
// writes fail with EROFS, device opens with EACCES. Mounts below it keep their own flags.
std::string seal(const char* path, unsigned long bind = MS_BIND) {
  if (mount(path, path, nullptr, bind, nullptr) != 0) return errno == ENOENT ? "" : failed(std::string("bind ") + path);
  if (mount(nullptr, path, nullptr, MS_BIND | MS_REMOUNT | kSealed, nullptr) != 0) {
    return failed(std::string("remount read-only ") + path);
  }
  return "";
}

// A tmpfs over /dev with the devices cases open bound into it from the devtmpfs beneath (reached through a
// descriptor taken before it is covered).
std::string narrow_dev() {
  const int old = open("/dev", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (old < 0) return failed("open /dev");
  std::string error;
  if (mount("tmpfs", "/dev", "tmpfs", MS_NOSUID | MS_NOEXEC, "mode=0755,size=64k") != 0) error = failed("mount tmpfs on /dev");
  for (const char* name : kDevices) {
    struct stat st {};
    if (!error.empty() || fstatat(old, name, &st, 0) != 0) continue;  // not in this kernel's /dev
    const std::string target = std::string("/dev/") + name;
    const std::string source = "/proc/self/fd/" + std::to_string(old) + "/" + name;
    const bool made = S_ISDIR(st.st_mode) ? mkdir(target.c_str(), 0755) == 0
                                          : close(open(target.c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0600)) == 0;
    if (!made) error = failed("make " + target);
    else if (mount(source.c_str(), target.c_str(), nullptr, MS_BIND | MS_REC, nullptr) != 0) error = failed("bind " + target);
  }
  close(old);
  return error;
}

// /proc/sys read-only but for kWritableSysctls: those bound first, then kept writable under the read-only whole.
std::string narrow_sysctls() {
  for (const char* path : kWritableSysctls) {
    if (mount(path, path, nullptr, MS_BIND, nullptr) != 0 && errno != ENOENT) return failed(std::string("bind ") + path);
  }
  return seal("/proc/sys", MS_BIND | MS_REC);
}

}  // namespace

std::string confine(bool sysrq_trigger) {
  if (unshare(CLONE_NEWNS) != 0) return failed("unshare(CLONE_NEWNS)");
  if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return failed("make / private");
  std::string error = narrow_dev();
  if (error.empty()) error = narrow_sysctls();
  if (error.empty() && !sysrq_trigger) error = seal("/proc/sysrq-trigger");
  if (error.empty()) error = seal("/sys", MS_BIND | MS_REC);
  if (error.empty() && mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777,size=16m") != 0) {
    error = failed("mount tmpfs on /tmp");  // init makes /tmp; a host's runs are not confined
  }
  if (error.empty() && mount(nullptr, "/", nullptr, MS_BIND | MS_REMOUNT | MS_RDONLY, nullptr) != 0) {
    error = failed("remount / read-only");
  }
  return error;
}

}  // namespace sigwake
