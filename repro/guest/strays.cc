#include "strays.h"

#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

namespace sigwake {
namespace {

struct Child {
  pid_t pid;
  bool dying;  // a zombie, exiting, or killed already (a case's child it killed and left to us to reap)
};

constexpr unsigned long kExiting = 0x4;  // PF_EXITING, in /proc/PID/stat's flags

// Whether SIGKILL is pending for the process (its fatal signal's delivery has begun).
bool killed(const std::string& pid) {
  std::ifstream status("/proc/" + pid + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("SigPnd:", 0) == 0 || line.rfind("ShdPnd:", 0) == 0) {
      if (std::strtoull(line.c_str() + 7, nullptr, 16) & (1ULL << (SIGKILL - 1))) return true;
    }
  }
  return false;
}

// Our children, from /proc/PID/stat's "pid (comm) state ppid pgrp session tty_nr tpgid flags" (comm may hold
// spaces and parentheses).
std::vector<Child> children() {
  std::vector<Child> found;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return found;
  while (const dirent* entry = readdir(proc)) {
    const pid_t pid = static_cast<pid_t>(std::atoi(entry->d_name));
    if (pid <= 0) continue;
    std::ifstream stat("/proc/" + std::string(entry->d_name) + "/stat");
    const std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
    const auto paren = text.rfind(')');
    if (paren == std::string::npos || paren + 4 >= text.size()) continue;  // gone meanwhile
    std::istringstream fields(text.substr(paren + 2));
    char state = 0;
    long ppid = 0, skip = 0;
    unsigned long flags = 0;
    if (!(fields >> state >> ppid >> skip >> skip >> skip >> skip >> flags) || ppid != getpid()) continue;
    found.push_back({pid, state == 'Z' || state == 'X' || (flags & kExiting) != 0 || killed(entry->d_name)});
  }
  closedir(proc);
  return found;
}

}  // namespace

bool reaped_by(pid_t pid, const Deadline& deadline, int* status) {
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));  // readable once it has exited (5.3)
  if (pidfd >= 0) {
    pollfd ended{pidfd, POLLIN, 0};
    for (timespec left = deadline.remaining_timespec(); ppoll(&ended, 1, &left, nullptr) < 0 && errno == EINTR;
         left = deadline.remaining_timespec()) {
    }
    close(pidfd);
  }
  int ignored = 0;
  for (;;) {  // without pidfds (before 5.3), SIGKILLed: it ends
    const pid_t got = waitpid(pid, status != nullptr ? status : &ignored, pidfd >= 0 ? WNOHANG : 0);
    if (got >= 0 || errno != EINTR) return got == pid;
  }
}

int sweep_strays(const Deadline& deadline) {
  siginfo_t info{};  // no child at all (most runs): no /proc to read
  if (waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT | __WALL) < 0 && errno == ECHILD) return 0;
  int running = 0;
  for (std::vector<Child> left = children(); !left.empty() && !deadline.expired(); left = children()) {
    for (const Child& child : left) {
      running += !child.dying;
      kill(child.pid, SIGKILL);  // a zombie leader's other threads too
    }
    for (const Child& child : left) reaped_by(child.pid, deadline);
  }
  return running;
}

}  // namespace sigwake
