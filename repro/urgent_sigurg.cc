// Urgent data on a TCP socket signals its owner by two rules of fs/fcntl.c:
// send_sigurg() sends SIGURG to the owner (tcp_check_urg() ->
// sk_send_sigurg()), and on a socket with O_ASYNC,
// sk_wake_async(SOCK_WAKE_URG) -> kill_fasync(SIGURG, POLL_PRI), which
// kill_fasync_rcu() passes on to send_sigio() only when F_SETSIG named a
// signal (SIGURG is already the signal). Both run in the loopback's softirq
// under the receiving socket's lock, for a process-group owner (F_SETOWN with
// -pgrp) through a walk of the group's tasks, before the byte's segment is
// queued (its POLL_IN comes after). The group's leader is gone, so only that
// walk reaches us: the pgid names no task of its own. Cases: _pgrp (SIGURG comes), _setsig (SIGURG, and
// F_SETSIG's signal, first with POLL_PRI and POLLPRI in si_band). A plain
// SIGIO kill_fasync_rcu() wrongly sent without F_SETSIG would merge with the
// segment's POLL_IN SIGIO, and a plain SIGIO says no reason: no case sees it.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include "lib/budgets.h"
#include "lib/evidence.h"
#include "lib/process.h"
#include "lib/repro.h"

namespace sigwake {
namespace {

// A TCP connection to ourselves over the loopback interface (the guest's init brings it up).
class LoopbackConnection {
 public:
  LoopbackConnection() {
    listener_ = tcp_socket();
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t length = sizeof address;
    auto* const any = reinterpret_cast<sockaddr*>(&address);
    if (bind(listener_, any, length) != 0) {  // lo down has no 127.0.0.1 yet
      if (errno == EADDRNOTAVAIL) throw Unsupported("bind 127.0.0.1: EADDRNOTAVAIL (the loopback interface is down)");
      check(false, "bind 127.0.0.1");
    }
    check(listen(listener_, 1) == 0, "listen");
    check(getsockname(listener_, any, &length) == 0, "getsockname");
    client_ = tcp_socket();
    if (connect(client_, any, length) != 0) {
      if (errno == ENETUNREACH) throw Unsupported("connect 127.0.0.1: ENETUNREACH (the loopback interface is down)");
      check(false, "connect 127.0.0.1");
    }
    server_ = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    check(server_ >= 0, "accept");
  }
  LoopbackConnection(const LoopbackConnection&) = delete;
  LoopbackConnection& operator=(const LoopbackConnection&) = delete;
  ~LoopbackConnection() {
    for (const int fd : {server_, client_, listener_}) {
      if (fd >= 0) close(fd);
    }
  }

  int client() const { return client_; }
  int server() const { return server_; }

 private:
  static int tcp_socket() {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 && errno == EAFNOSUPPORT) throw Unsupported("socket(AF_INET): EAFNOSUPPORT (no CONFIG_INET)");
    check(fd >= 0, "socket(AF_INET, SOCK_STREAM)");
    return fd;
  }

  int listener_ = -1;
  int client_ = -1;
  int server_ = -1;
};

}  // namespace

// While it lives we are the only member of a process group whose leader was
// killed and reaped: pid_task() on its pgid finds nobody, and only a walk of
// the group (do_each_pid_task(PIDTYPE_PGID)) reaches us. Then back home.
class LeaderlessGroup {
 public:
  LeaderlessGroup() : home_(getpgrp()), id_(fork_stopped([] {}, /*own_group=*/true)) {
    const bool joined = setpgid(0, id_) == 0;
    const int err = errno;
    kill_and_reap(id_);  // not its group: we are in it now
    errno = err;
    check(joined, "setpgid into a stopped child's group");
  }
  LeaderlessGroup(const LeaderlessGroup&) = delete;
  LeaderlessGroup& operator=(const LeaderlessGroup&) = delete;
  ~LeaderlessGroup() { setpgid(0, home_); }

  pid_t id() const { return id_; }

 private:
  pid_t home_;
  pid_t id_;
};

// One urgent byte to a socket a leaderless process group of ours owns, with O_ASYNC and F_SETSIG `signo`
// (0: none): how many of each signal came, and whether the byte arrived (POLLPRI).
struct Urgent {
  SignalCapture sigurg{SIGURG};  // ignored by default: caught and counted instead
  SignalCapture sigio{SIGIO};    // the segment's POLL_IN without F_SETSIG: caught, not judged
  bool arrived = false;

  void send(Report& report, int signo) {
    LoopbackConnection tcp;
    const LeaderlessGroup owner;
    const pid_t group = owner.id();
    check(fcntl(tcp.server(), F_SETOWN, -group) == 0, "F_SETOWN to our process group");
    if (fcntl(tcp.server(), F_GETOWN) != -group) throw Misdelivered("F_GETOWN does not read back the process group");
    const int flags = fcntl(tcp.server(), F_GETFL);
    check(flags >= 0 && fcntl(tcp.server(), F_SETFL, flags | O_ASYNC) == 0, "fcntl(F_SETFL, O_ASYNC)");
    check(fcntl(tcp.server(), F_SETSIG, signo) == 0, "fcntl(F_SETSIG)");
    check(send_urgent(tcp.client()), "send 1 byte MSG_OOB");
    sigurg.wait_for(1, Deadline(kWakeupBudget));
    arrived = (wait_readable(tcp.server(), kWakeupBudget, POLLPRI) & POLLPRI) != 0;
    sigio.accept_pending();
    report.add("owner_pgrp", static_cast<long long>(group));
    report.add("urgent_pending", arrived);
    add_signal_evidence(report, sigurg);
  }

  static bool send_urgent(int fd) { return ::send(fd, "!", 1, MSG_OOB) == 1; }
};

SIGWAKE_CASE(urgent_sigurg_pgrp, {.expected = {always(Verdict::kDelivered,
                                    "fs/fcntl.c: send_sigurg() signals the owner, every task of a process-group "
                                    "owner; fcntl(2) F_SETOWN. Known of the kernels that have CONFIG_INET: "
                                    "Debian's and the host's (a kernel built here without it refuses)")
                                    .of_origins({"debian", "host"})},
                                  .defining = {"si_signo", "si_code"},
                                  .shown = {"signals", "si_code", "urgent_pending"},
                                  .kconfig = {"CONFIG_INET"}}) {
  Urgent urgent;
  urgent.send(report, 0);
  if (!urgent.arrived) return report.decide(Verdict::kNoWakeup, "the urgent byte never reached the socket (no POLLPRI)");
  if (urgent.sigurg.count() == 0) return report.decide(Verdict::kNotDelivered, "urgent data arrived, no SIGURG came");
  report.decide(Verdict::kDelivered, "the process group owning the socket got SIGURG for its urgent data");
}

SIGWAKE_CASE(urgent_sigurg_setsig, {.expected = {always(Verdict::kDelivered,
                                      "fs/fcntl.c: with F_SETSIG, kill_fasync_rcu() passes SIGURG's POLL_PRI on to "
                                      "send_sigio(), which sends the named signal with si_code POLL_PRI, beside "
                                      "send_sigurg()'s SIGURG; fcntl(2) F_SETSIG. Known of the kernels that have "
                                      "CONFIG_INET: Debian's and the host's (a kernel built here without it refuses)")
                                      .of_origins({"debian", "host"})},
                                    .defining = {"si_signo", "si_code", "setsig_code", "setsig_band"},
                                    .shown = {"signals", "setsig_signals", "setsig_code"},
                                    .kconfig = {"CONFIG_INET"}}) {
  const int signo = SIGRTMIN + 3;
  SignalCapture named(signo);
  Urgent urgent;
  urgent.send(report, signo);
  named.wait_for(1, Deadline(kSignalGrace));
  add_signal_evidence(report, named, "setsig_");
  const auto deliveries = named.deliveries();
  const bool pri = !deliveries.empty() && deliveries.front().code == POLL_PRI && (deliveries.front().band & POLLPRI);
  report.add("setsig_code", static_cast<long long>(deliveries.empty() ? 0 : deliveries.front().code));
  report.add("setsig_band", pri);
  if (!urgent.arrived) return report.decide(Verdict::kNoWakeup, "the urgent byte never reached the socket (no POLLPRI)");
  if (urgent.sigurg.count() == 0) return report.decide(Verdict::kNotDelivered, "urgent data arrived, no SIGURG came");
  if (named.count() == 0) return report.decide(Verdict::kNotDelivered, "SIGURG came, F_SETSIG's signal did not");
  if (!pri) return report.decide(Verdict::kMisdelivered, "F_SETSIG's signal came without POLL_PRI and POLLPRI");
  report.decide(Verdict::kDelivered, "urgent data brought SIGURG and F_SETSIG's signal with POLL_PRI");
}

}  // namespace sigwake
