#include "process.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <exception>
#include <utility>

#include "budgets.h"
#include "deadline.h"
#include "errors.h"

namespace sigwake {

void pin_to_cpu(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  check(sched_setaffinity(0, sizeof set, &set) == 0, "sched_setaffinity");
}

namespace {

void wait_stopped(pid_t pid) {
  int status = 0;
  pid_t got;
  do {
    got = waitpid(pid, &status, WUNTRACED);
  } while (got < 0 && errno == EINTR);
  check(got == pid, "waitpid(WUNTRACED)");
  if (!WIFSTOPPED(status)) throw ReproError("the child ended instead of stopping");
}

}  // namespace

void kill_and_reap(pid_t pid, bool group) {
  if (group) kill(-pid, SIGKILL);
  kill(pid, SIGKILL);
  while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
  }
}

pid_t fork_stopped(const std::function<void()>& body, bool own_group, int ran_fd) {
  const pid_t pid = fork();
  check(pid >= 0, "fork");
  if (pid == 0) {
    if (own_group) setpgid(0, 0);
    raise(SIGSTOP);
    if (body) body();
    const char ran = 1;
    if (ran_fd >= 0) (void)!write(ran_fd, &ran, 1);
    raise(SIGSTOP);
    _exit(0);
  }
  wait_stopped(pid);
  return pid;
}

StoppedChild::StoppedChild(std::function<void()> after_resume) {
  int fds[2];
  check(pipe2(fds, O_CLOEXEC) == 0, "pipe2");
  ran_fd_ = fds[0];
  pid_ = fork_stopped(after_resume, true, fds[1]);
  close(fds[1]);
}

void StoppedChild::end() {
  if (std::exchange(ended_, true)) return;
  close(ran_fd_);
  kill_and_reap(pid_, true);
}

void StoppedChild::resume() const { check(kill(pid_, SIGCONT) == 0, "kill(SIGCONT)"); }

bool StoppedChild::ran(std::chrono::milliseconds budget) {
  if (stopped_again_) return true;
  if (!(wait_readable(ran_fd_, budget) & POLLIN)) return false;
  wait_stopped(pid_);  // its next step after the byte is raise(SIGSTOP): bounded
  stopped_again_ = true;
  return true;
}

namespace {

// Closes every descriptor from 3 up but `a` and `b`: a witness holds no other one's pipe (whose end it would
// otherwise keep open) and no perf event.
void close_all_but(int a, int b) {
  const unsigned low = static_cast<unsigned>(std::min(a, b)), high = static_cast<unsigned>(std::max(a, b));
  if (low > 3) close_range(3, low - 1, 0);
  if (high > low + 1) close_range(low + 1, high - 1, 0);
  close_range(high + 1, ~0U, 0);
}

}  // namespace

namespace {

volatile sig_atomic_t witnessed = 0;  // a witness is a process of its own: one count each
void note_signal(int) { witnessed = witnessed + 1; }

// What a witness writes on its answer pipe.
constexpr char kWaiting = 0;     // its setup ran: it waits
constexpr char kSignalled = 1;   // one more signal ran its handler
constexpr char kAnswered = 2;    // asked, it has told every signal sent before the question

}  // namespace

SignalWitness::SignalWitness(int signo, const std::function<void()>& setup) {
  int answer[2], end[2];
  check(pipe2(answer, O_CLOEXEC) == 0, "pipe2");
  check(pipe2(end, O_CLOEXEC) == 0, "pipe2");
  sigset_t wanted;
  sigemptyset(&wanted);
  sigaddset(&wanted, signo);
  pid_ = fork();
  check(pid_ >= 0, "fork");
  if (pid_ == 0) {
    close_all_but(answer[1], end[0]);
    sigset_t waiting;  // what ppoll() lets through: the signal, only while we wait
    sigprocmask(SIG_BLOCK, &wanted, &waiting);
    sigdelset(&waiting, signo);
    struct sigaction action {};
    action.sa_handler = note_signal;
    sigaction(signo, &action, nullptr);
    try {
      if (setup) setup();
    } catch (const std::exception&) {
      _exit(1);
    }
    (void)!write(answer[1], &kWaiting, 1);
    // Each signal is told as it comes (the handler runs inside ppoll); a question on `end` is answered once
    // every signal sent before it was told; the end of `end` (our maker is done with us) ends us: a witness of
    // another uid may be one its maker cannot kill (no CAP_KILL), so it must be able to stop by itself. No
    // signalfd: tinyconfig kernels have none.
    pollfd question{end[0], POLLIN, 0};
    int told = 0;
    for (;;) {
      const int rc = ppoll(&question, 1, nullptr, &waiting);
      char asked = 0;
      if (rc > 0 && read(end[0], &asked, 1) == 1) {
        // ppoll() returned for the question and blocked the signal again: one sent before the question may be
        // pending still, and a ppoll() that returns at once lets it run.
        const timespec now{};
        ppoll(nullptr, 0, &now, &waiting);
      }
      for (; told < witnessed; ++told) (void)!write(answer[1], &kSignalled, 1);
      if (rc < 0 && errno == EINTR) continue;
      if (asked == 0) break;
      (void)!write(answer[1], &kAnswered, 1);
    }
    _exit(0);
  }
  close(answer[1]);
  close(end[0]);
  answer_fd_ = answer[0];
  end_fd_ = end[1];
  char ready = 1;
  if (!(wait_readable(answer_fd_, kWakeupBudget) & POLLIN) || read(answer_fd_, &ready, 1) != 1 ||
      ready != kWaiting) {
    stop();
    throw ReproError("a witness never started waiting (its setup failed, or it never ran)");
  }
}

void SignalWitness::stop() {
  close(end_fd_);
  close(answer_fd_);
  kill_and_reap(pid_, false);  // the kill may be refused; the closed end stops it then
}

SignalWitness::~SignalWitness() { stop(); }

bool SignalWitness::received(std::chrono::milliseconds budget) {
  char got = 0;
  return (wait_readable(answer_fd_, budget) & POLLIN) && read(answer_fd_, &got, 1) == 1 && got == kSignalled;
}

bool SignalWitness::signalled_by_now() {
  // A witness that is gone was ended by a signal (it has a handler for ours and waits until told): signalled.
  // Its closed pipe must not end us with SIGPIPE: blocked around the question, and a pending one taken.
  sigset_t pipe_signal, before;
  sigemptyset(&pipe_signal);
  sigaddset(&pipe_signal, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_signal, &before);
  const char ask = 1;
  const bool asked = write(end_fd_, &ask, 1) == 1;
  const int error = errno;
  const timespec now{};
  if (!asked && error == EPIPE) sigtimedwait(&pipe_signal, nullptr, &now);
  pthread_sigmask(SIG_SETMASK, &before, nullptr);
  if (!asked && error == EPIPE) return true;
  errno = error;
  check(asked, "write(the question to a witness)");
  bool signalled = false;
  for (;;) {
    char got = 0;
    if (!(wait_readable(answer_fd_, kWakeupBudget) & POLLIN) || read(answer_fd_, &got, 1) != 1) {
      throw ReproError("a witness did not answer whether it was signalled");
    }
    if (got == kAnswered) return signalled;
    signalled = true;
  }
}

AnonymousPage::AnonymousPage()
    : address_(mmap(nullptr, static_cast<std::size_t>(sysconf(_SC_PAGESIZE)), PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)) {
  check(address_ != MAP_FAILED, "mmap(MAP_ANONYMOUS)");
}

AnonymousPage::~AnonymousPage() { munmap(address_, static_cast<std::size_t>(sysconf(_SC_PAGESIZE))); }

Pipe::Pipe() { check(pipe2(fds_, O_CLOEXEC) == 0, "pipe2"); }

Pipe::~Pipe() {
  for (const int fd : fds_) {
    if (fd >= 0) close(fd);
  }
}

void Pipe::close_end(int end) {
  close(fds_[end]);
  fds_[end] = -1;
}

void Pipe::send(const std::string& words) const { (void)!write(fds_[1], words.data(), words.size()); }

std::string Pipe::read_to_end() const {
  std::string words;
  char chunk[256];
  for (ssize_t n; (n = read(fds_[0], chunk, sizeof chunk)) > 0;) words.append(chunk, static_cast<std::size_t>(n));
  return words;
}

bool Pipe::wait_byte(std::chrono::milliseconds budget) const {
  char byte = 0;
  return (wait_readable(fds_[0], budget) & POLLIN) && read(fds_[0], &byte, 1) == 1;
}

void Pipe::send_byte() const { check(write(fds_[1], "", 1) == 1, "write(pipe)"); }

int Pipe::keep(int end) const {
  check(fcntl(fds_[end], F_SETFD, 0) == 0, "fcntl(F_SETFD)");
  return fds_[end];
}

short wait_readable(int fd, std::chrono::milliseconds budget, short events) {
  const Deadline deadline(budget);
  pollfd pfd{fd, events, 0};
  for (;;) {  // polls at least once, so a zero budget asks for the current state
    const timespec left = deadline.remaining_timespec();
    const int rc = ppoll(&pfd, 1, &left, nullptr);
    if (rc > 0) return budget.count() > 0 && deadline.expired() ? 0 : pfd.revents;
    check(rc == 0 || errno == EINTR, "ppoll");
    if (deadline.expired()) return 0;
  }
}

bool in_sigwake_guest() {
  char exe[64] = {};
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  return n > 0 && std::string_view(exe, static_cast<std::size_t>(n)).starts_with("/repro/");
}

void burn_cpu(std::chrono::microseconds budget) {
  const std::int64_t end = monotonic_ns() + std::chrono::nanoseconds(budget).count();
  volatile std::uint64_t sink = 1;
  while (monotonic_ns() < end) {
    for (int i = 0; i < 10000; ++i) sink = sink * 6364136223846793005ULL + 1;
  }
}

std::uint64_t map_one_page() {
  void* page = mmap(nullptr, 1, PROT_READ, MAP_ANONYMOUS | MAP_PRIVATE, -1, 0);
  check(page != MAP_FAILED, "mmap(MAP_ANONYMOUS)");
  check(munmap(page, 1) == 0, "munmap");
  return reinterpret_cast<std::uintptr_t>(page);
}

}  // namespace sigwake
