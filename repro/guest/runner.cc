#include "runner.h"

#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#if defined(__x86_64__)
#include <sys/io.h>
#endif
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "../lib/deadline.h"
#include "../lib/errors.h"

namespace sigwake {
namespace {

// A root-pass reproducer keeps what perf (CAP_PERFMON, or CAP_SYS_ADMIN before 5.8), BPF (CAP_BPF), the ring
// buffer's locked memory (CAP_IPC_LOCK), libbpf's memlock bump (CAP_SYS_RESOURCE) and sigio_permission's
// owners and witnesses of other uids (CAP_SETUID) need, and nothing else: without CAP_SYS_PTRACE it cannot
// read PID 1's memory (PID 1 is not dumpable, and stays uid 0), so the token cannot leak.
// Dropped from the bounding set, so the exec'd program never has them.
void drop_capabilities() {
  constexpr int kPerfmon = 38, kBpf = 39;  // named in linux/capability.h from 5.8 on
  constexpr int kKeep[] = {CAP_SYS_ADMIN, CAP_IPC_LOCK, CAP_SYS_RESOURCE, CAP_SETUID, kPerfmon, kBpf};
  for (int cap = 0; cap < 64; ++cap) {
    bool keep = cap == CAP_SETPCAP;  // needed to drop the others: dropped last
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

RunOutcome run_with_deadline(const std::vector<std::string>& argv, std::chrono::milliseconds budget, int uid,
                             const std::function<void(pid_t)>& started) {
  RunOutcome outcome;
  if (argv.empty()) throw ReproError("run_with_deadline: empty argv");
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  int pipe_fds[2], go[2];
  check(pipe2(pipe_fds, O_CLOEXEC) == 0, "pipe2");
  check(pipe2(go, O_CLOEXEC) == 0, "pipe2");
  const Deadline deadline(budget);
  const std::int64_t start = monotonic_ns();
  const pid_t pid = fork();
  check(pid >= 0, "fork");
  if (pid == 0) {
    char ready;
    close(go[1]);
    while (read(go[0], &ready, 1) < 0 && errno == EINTR) {
    }  // EOF: the parent has done what `started` needed
    // Nothing of PID 1's reaches a reproducer: stdin is /dev/null (not the
    // console the kernel gave init), and no other descriptor stays open.
    const int null_fd = open("/dev/null", O_RDONLY);
    if (null_fd < 0 || dup2(null_fd, STDIN_FILENO) < 0) _exit(126);
    dup2(pipe_fds[1], STDOUT_FILENO);
    dup2(pipe_fds[1], STDERR_FILENO);
    close_range(3, ~0U, 0);
    setpgid(0, 0);  // its own group, so a deadline kill reaches anything it forked
    if (uid >= 0 && (setgroups(0, nullptr) != 0 || setgid(uid) != 0 || setuid(uid) != 0)) _exit(126);
    if (uid < 0) {
      grant_keyboard_ports(argv[0]);
      drop_capabilities();
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
      kill(-pid, SIGKILL);
      kill(pid, SIGKILL);
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

  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    check(errno == EINTR, "waitpid(reproducer)");
  }
  outcome.duration_us = (monotonic_ns() - start) / 1000;
  outcome.exited = WIFEXITED(status);
  if (outcome.exited) outcome.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) outcome.term_signal = WTERMSIG(status);
  return outcome;
}

}  // namespace sigwake
