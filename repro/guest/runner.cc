#include "runner.h"

#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#if defined(__x86_64__)
#include <sys/io.h>
#endif
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <string_view>

#include "../lib/deadline.h"
#include "../lib/errors.h"
#include "../lib/grants.h"
#include "case_loop.h"
#include "confine.h"
#include "strays.h"

namespace sigwake {
namespace {

// The CPU time of every child this process has reaped (the reproducers and what they forked and reaped): the
// difference across a run is what the run's processes ran; the rest of its wall time they spent waiting (a
// deadline, a sleep, the scheduler), or less than none where its threads ran on several CPUs at once.
long long children_cpu_us() {
  rusage usage{};
  check(getrusage(RUSAGE_CHILDREN, &usage) == 0, "getrusage(RUSAGE_CHILDREN)");
  const auto us = [](const timeval& t) { return static_cast<long long>(t.tv_sec) * 1'000'000 + t.tv_usec; };
  return us(usage.ru_utime) + us(usage.ru_stime);
}

constexpr std::chrono::seconds kSweepBudget{10};  // to kill and reap what a run left

// The programs whose cases may be granted anything: reviewed here, so that no program grants itself what its
// listing asks (a case's facts ask; this allows). Matched on the file's name, which the harness gives (tests put
// a prefix before it: "a_sysrq_crash").
constexpr std::string_view kMayBeGranted[] = {"mmap_record_overlay", "sigtrap_other_task",
                                              "sysrq_crash", "provoke"};  // the last two: repro/tests' stand-ins

bool granted(const RunLimits& limits, std::string_view grant) {
  return std::find(limits.grants.begin(), limits.grants.end(), grant) != limits.grants.end();
}

// A root-pass reproducer keeps what perf (CAP_PERFMON), BPF (CAP_BPF), the ring buffer's locked memory
// (CAP_IPC_LOCK), libbpf's memlock bump (CAP_SYS_RESOURCE) and sigio_permission's owners and witnesses of other
// uids (CAP_SETUID) need, and nothing else: without CAP_SYS_PTRACE it cannot read PID 1's memory (PID 1 is not
// dumpable, and stays uid 0), so the token cannot leak; without CAP_SYS_ADMIN, CAP_SYSLOG and CAP_MKNOD it
// cannot undo its confinement, redirect the console (TIOCCONS), change its loglevel (syslog(2)) or make a
// /dev/kmsg of its own. CAP_SYS_ADMIN only for a case granted it, or where perf asks it: a kernel before
// CAP_PERFMON (5.8: there confinement holds nothing), or a host's perf_event_paranoid above 2 (Debian's 3; a
// guest's root pass lowers it, init.cc, and a confined run cannot raise it).
// Dropped from the bounding set, so the exec'd program never has them.
void drop_capabilities(const RunLimits& limits) {
  constexpr int kPerfmon = 38, kBpf = 39;  // named in linux/capability.h from 5.8 on
  const bool admin = granted(limits, kGrantSysAdmin) || prctl(PR_CAPBSET_READ, kPerfmon, 0, 0, 0) < 0 ||
                     (!limits.confined && std::atoi(read_value(kParanoidSysctl).c_str()) > 2);
  constexpr int kKeep[] = {CAP_IPC_LOCK, CAP_SYS_RESOURCE, CAP_SETUID, kPerfmon, kBpf};
  for (int cap = 0; cap < 64; ++cap) {
    bool keep = cap == CAP_SETPCAP || (cap == CAP_SYS_ADMIN && admin);  // CAP_SETPCAP: to drop the others, last
    for (int k : kKeep) keep = keep || cap == k;
    if (!keep) prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);  // EINVAL past the kernel's last capability
  }
  prctl(PR_CAPBSET_DROP, CAP_SETPCAP, 0, 0, 0);
}

// The keyboard controller's two ports, kept across exec (ioperm(2)) where CAP_SYS_RAWIO is not, for
// evdev_sigio alone: its _irq case has the controller raise a keyboard interrupt through them. Any other
// program could reset the machine or type into its console through them; the serial console's ports stay
// out of everyone's reach.
void grant_keyboard_ports(const std::string& program) {
#if defined(__x86_64__)
  if (program.substr(program.rfind('/') + 1) != "evdev_sigio") return;
  ioperm(0x60, 1, 1);  // ENOSYS without CONFIG_X86_IOPL_IOPERM: the case finds no grant and says so
  ioperm(0x64, 1, 1);
#else
  (void)program;
#endif
}

}  // namespace

bool may_be_granted(const std::string& program) {
  const std::string name = program.substr(program.rfind('/') + 1);
  for (const std::string_view allowed : kMayBeGranted) {
    if (name == allowed || (name.size() > allowed.size() && name.ends_with(allowed) &&
                            name[name.size() - allowed.size() - 1] == '_')) {
      return true;
    }
  }
  return false;
}

RunOutcome run_with_deadline(const std::vector<std::string>& argv, std::chrono::milliseconds budget,
                             const RunLimits& limits, const std::function<void(pid_t)>& started) {
  RunOutcome outcome;
  if (argv.empty()) throw ReproError("run_with_deadline: empty argv");
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  int pipe_fds[2], go[2];
  check(pipe2(pipe_fds, O_CLOEXEC) == 0, "pipe2");
  check(pipe2(go, O_CLOEXEC) == 0, "pipe2");
  prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);  // what the run leaves becomes ours to sweep (PID 1's anyway)
  const Deadline deadline(budget);
  const std::int64_t start = monotonic_ns();
  const long long cpu_before = children_cpu_us();
  const pid_t pid = fork();
  check(pid >= 0, "fork");
  if (pid == 0) {
    char ready;
    close(go[1]);
    while (read(go[0], &ready, 1) < 0 && errno == EINTR) {
    }  // EOF: the parent has done what `started` needed
    if (limits.confined) {
      if (const std::string error = confine(granted(limits, kGrantSysrq)); !error.empty()) {
        const std::string said = "sigwake-runner: could not confine the run: " + error + "\n";
        (void)!write(pipe_fds[1], said.data(), said.size());
        _exit(126);
      }
    }
    // Nothing of PID 1's reaches a reproducer: stdin is /dev/null (not the
    // console the kernel gave init), and no other descriptor stays open.
    const int null_fd = open("/dev/null", O_RDONLY);
    if (null_fd < 0 || dup2(null_fd, STDIN_FILENO) < 0) _exit(126);
    dup2(pipe_fds[1], STDOUT_FILENO);
    dup2(pipe_fds[1], STDERR_FILENO);
    close_range(3, ~0U, 0);
    setpgid(0, 0);  // its own group, so a deadline kill reaches anything it forked
    const int uid = limits.uid;
    if (uid >= 0 && (setgroups(0, nullptr) != 0 || setgid(uid) != 0 || setuid(uid) != 0)) _exit(126);
    if (uid < 0) {
      grant_keyboard_ports(argv[0]);
      drop_capabilities(limits);
    }
    execv(args[0], args.data());
    _exit(127);
  }
  close(pipe_fds[1]);
  close(go[0]);
  if (started) started(pid);
  close(go[1]);

  // Read until EOF (every writer gone) or the deadline.
  char buffer[4096];
  pollfd pfd{pipe_fds[0], POLLIN, 0};
  for (;;) {
    if (deadline.expired()) {
      outcome.timed_out = true;
      break;
    }
    const timespec left = deadline.remaining_timespec();
    const int rc = ppoll(&pfd, 1, &left, nullptr);
    if (rc < 0 && errno == EINTR) continue;
    check(rc >= 0, "ppoll(reproducer output)");
    if (rc == 0) continue;
    const ssize_t n = read(pipe_fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    outcome.output.append(buffer, static_cast<std::size_t>(n));
  }
  close(pipe_fds[0]);

  // Its output ended (or the deadline came): it may still run, its descriptors closed, until the deadline.
  int status = 0;
  if (outcome.timed_out || !reaped_by(pid, deadline, &status)) {
    outcome.timed_out = true;
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    while (waitpid(pid, &status, 0) < 0) check(errno == EINTR, "waitpid(reproducer)");  // SIGKILLed: it ends
  }
  outcome.duration_us = (monotonic_ns() - start) / 1000;
  // over the same window as duration_us: the program and what it reaped (strays swept next are no one's)
  outcome.cpu_us = children_cpu_us() - cpu_before;
  outcome.strays = sweep_strays(Deadline(kSweepBudget));
  outcome.exited = WIFEXITED(status);
  if (outcome.exited) outcome.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) outcome.term_signal = WTERMSIG(status);
  return outcome;
}

}  // namespace sigwake
