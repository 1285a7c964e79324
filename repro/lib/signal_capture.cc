#include "signal_capture.h"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstring>

#include "errors.h"

namespace sigwake {
namespace {

struct Slot {
  std::atomic<int> reserved{0};
  Delivery log[SignalCapture::kLogged];
  std::atomic<bool> ready[SignalCapture::kLogged];
};

// Indexed by signal number; a handler can reach nothing but static storage.
Slot g_slots[_NSIG];

// The kernel copies its whole siginfo (48 bytes on 64-bit) to the handler, zeroed
// first (clear_siginfo()): the bytes around SIGPOLL's fields (the padding after
// si_code, everything after si_fd) must be 0, or kernel memory leaked into them.
static_assert(sizeof(void*) == 8, "the kernel siginfo layout below is the 64-bit one");
constexpr std::size_t kKernelSiginfoBytes = 48;

bool has_stale_bytes(const siginfo_t* info) {
  const auto* raw = reinterpret_cast<const unsigned char*>(info);
  constexpr std::size_t code_end = offsetof(siginfo_t, si_code) + sizeof(int);
  constexpr std::size_t fields = offsetof(siginfo_t, si_band);
  constexpr std::size_t fd_end = offsetof(siginfo_t, si_fd) + sizeof(int);
  bool stale = false;
  for (std::size_t i = code_end; i < fields; ++i) stale |= raw[i] != 0;
  for (std::size_t i = fd_end; i < kKernelSiginfoBytes; ++i) stale |= raw[i] != 0;
  return stale;
}

// The kernel's _sigfault._perf fields follow si_addr (include/uapi/asm-generic/siginfo.h): data, type, flags.
void read_perf_fields(const siginfo_t* info, Delivery& d) {
  const auto* raw = reinterpret_cast<const unsigned char*>(info) + offsetof(siginfo_t, si_addr) + sizeof(void*);
  std::memcpy(&d.perf_data, raw, sizeof d.perf_data);
  std::memcpy(&d.perf_type, raw + 8, sizeof d.perf_type);
  std::memcpy(&d.perf_flags, raw + 12, sizeof d.perf_flags);
}

void record_delivery(int signo, siginfo_t* info, void*) {
  const int saved_errno = errno;
  Slot& slot = g_slots[signo];
  const int index = slot.reserved.fetch_add(1, std::memory_order_relaxed);
  if (index < SignalCapture::kLogged) {
    slot.log[index] = Delivery{signo,          info->si_code, info->si_band, info->si_fd,
                                info->si_errno, has_stale_bytes(info), gettid(), monotonic_ns()};
    read_perf_fields(info, slot.log[index]);
    slot.ready[index].store(true, std::memory_order_release);
  }
  errno = saved_errno;
}

sigset_t only(int signo) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, signo);
  return set;
}

}  // namespace

SignalCapture::SignalCapture(int signo) : signo_(signo) {
  Slot& slot = g_slots[signo];
  slot.reserved.store(0);
  for (auto& ready : slot.ready) ready.store(false);

  sigset_t block = only(signo), old_mask;
  check(pthread_sigmask(SIG_BLOCK, &block, &old_mask) == 0, "pthread_sigmask(SIG_BLOCK)");
  was_blocked_ = sigismember(&old_mask, signo) == 1;

  struct sigaction action {};
  action.sa_sigaction = record_delivery;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  check(sigaction(signo, &action, &old_action_) == 0, "sigaction");
}

SignalCapture::~SignalCapture() {
  // A signal still pending is counted, never discarded: take it with our handler
  // installed, then put the old action and mask back.
  accept_pending();
  if (!was_blocked_) {
    sigset_t set = only(signo_);
    pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
  }
  sigaction(signo_, &old_action_, nullptr);
}

int SignalCapture::count() const { return g_slots[signo_].reserved.load(std::memory_order_acquire); }

std::vector<Delivery> SignalCapture::deliveries() const {
  std::vector<Delivery> out;
  const Slot& slot = g_slots[signo_];
  for (int i = 0; i < kLogged; ++i) {
    if (slot.ready[i].load(std::memory_order_acquire)) out.push_back(slot.log[i]);
  }
  return out;
}

bool SignalCapture::wait_for(int n, const Deadline& deadline, int stop_fd) const {
  sigset_t unblocked;
  check(pthread_sigmask(SIG_SETMASK, nullptr, &unblocked) == 0, "pthread_sigmask(query)");
  sigdelset(&unblocked, signo_);
  pollfd stop{stop_fd, POLLIN, 0};
  // At least one ppoll even past the deadline: a signal that is already pending
  // is taken (ppoll swaps the mask atomically) before anyone says none came.
  while (count() < n) {
    const timespec left = deadline.remaining_timespec();
    const int rc = ppoll(stop_fd >= 0 ? &stop : nullptr, stop_fd >= 0 ? 1 : 0, &left, &unblocked);
    check(rc >= 0 || errno == EINTR, "ppoll");
    if (rc > 0) return count() >= n;
    if (rc == 0 && deadline.expired()) break;
  }
  return count() >= n;
}

int SignalCapture::collect(std::chrono::nanoseconds grace, std::chrono::nanoseconds settle, int most) const {
  if (wait_for(1, Deadline(grace))) wait_for(most, Deadline(settle));
  return count();
}

void SignalCapture::accept_pending() const {
  sigset_t set = only(signo_);
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);  // a pending one runs its handler here
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

SignalCapture::Unblocked::Unblocked(const SignalCapture& capture) : signo_(capture.signo_) {
  sigset_t set = only(signo_);
  check(pthread_sigmask(SIG_UNBLOCK, &set, nullptr) == 0, "pthread_sigmask(SIG_UNBLOCK)");
}

SignalCapture::Unblocked::~Unblocked() {
  sigset_t set = only(signo_);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

}  // namespace sigwake
