// An evdev reader with O_ASYNC, F_SETOWN and F_SETSIG is signalled by
// fs/fcntl.c's kill_fasync() at each SYN_REPORT (evdev's __pass_event()), with
// the input device's event_lock held, from two contexts:
//  - _irq: the i8042 controller is told to receive a byte from the keyboard
//    (command 0xD2, "write keyboard output buffer"), which raises IRQ1: atkbd
//    reports it in the interrupt handler. The one signaller sigwake has under a
//    lock an interrupt handler takes: a lockdep kernel then knows event_lock as
//    HARDIRQ-safe, and reports any fasync or owner lock below it that another
//    path holds with interrupts on (2f488f698fda, 8d1ddb5e7937 and f671a691e299
//    fixed three such). Only on SMP: a UP kernel's rwlocks are not queued, so
//    lockdep takes every reader as recursive, and such readers never invert.
//  - _written: the same event written to the device by a second reader
//    (evdev_write() -> input_inject_event()), in process context, to a reader
//    our process group owns: send_sigio() walks the group below event_lock
//    (00633c468382 took tasklist_lock out of that walk). Then F_GETOWN and
//    F_GETOWN_EX must read the owner back.
// The byte is KEY_A's break code (set 1, as the controller translates): the
// key is up, so the input core drops the key event and no key is ever pressed;
// the scan code (EV_MSC/MSC_SCAN) and its SYN_REPORT still reach every reader.
// Root pass of an x86 guest only: the device node is root's, and the runner
// grants the controller's two ports to that pass alone.
#include <fcntl.h>
#include <linux/input.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <sys/io.h>
#endif

#include <cerrno>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "lib/budgets.h"
#include "lib/evidence.h"
#include "lib/process.h"
#include "lib/repro.h"

namespace sigwake {
namespace {

constexpr int kKeyABreak = 0x9e;

// /dev/input/eventN of the AT keyboard, as /proc/bus/input/devices names its handlers.
std::string keyboard_node() {
  std::ifstream devices("/proc/bus/input/devices");
  std::string line;
  bool keyboard = false;
  while (std::getline(devices, line)) {
    if (line.starts_with("N: ")) keyboard = line.find("AT Translated Set 2 keyboard") != std::string::npos;
    const auto event = line.find("event");
    if (keyboard && line.starts_with("H: ") && event != std::string::npos) {
      return "/dev/input/" + line.substr(event, line.find_first_of(" \n", event) - event);
    }
  }
  throw Unsupported("no evdev node for an AT keyboard (CONFIG_INPUT_EVDEV and CONFIG_KEYBOARD_ATKBD built in)");
}

// How many keyboard interrupts (IRQ 1) the CPUs have taken, as /proc/interrupts counts them.
long long keyboard_interrupts() {
  std::ifstream interrupts("/proc/interrupts");
  std::string line;
  while (std::getline(interrupts, line)) {
    std::istringstream fields(line);
    std::string irq;
    fields >> irq;
    if (irq != "1:") continue;
    long long total = 0, count = 0;
    while (fields >> count) total += count;
    return total;
  }
  throw ReproError("/proc/interrupts has no IRQ 1");
}

// A reader of the keyboard's events that asked for SIGIO (F_SETSIG SIGIO: si_code and si_fd are filled) to
// `owner` (F_SETOWN's argument: a pid, or a process group as its negation).
class Reader {
 public:
  Reader(const std::string& node, pid_t owner) : fd_(open(node.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC)) {
    if (fd_ < 0 && errno == EACCES) throw Unsupported("open " + node + ": EACCES: the device node is root's");
    check(fd_ >= 0, "open " + node);
    const int flags = fcntl(fd_, F_GETFL);
    check(flags >= 0 && fcntl(fd_, F_SETFL, flags | O_ASYNC) == 0, "fcntl(F_SETFL, O_ASYNC)");
    check(fcntl(fd_, F_SETOWN, owner) == 0, "fcntl(F_SETOWN)");
    check(fcntl(fd_, F_SETSIG, SIGIO) == 0, "fcntl(F_SETSIG)");
  }
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;
  ~Reader() { close(fd_); }

  int fd() const { return fd_; }

  // The scan codes queued so far (each EV_MSC/MSC_SCAN event's value).
  std::vector<int> scan_codes() const {
    std::vector<int> codes;
    input_event event{};
    while (read(fd_, &event, sizeof event) == sizeof event) {
      if (event.type == EV_MSC && event.code == MSC_SCAN) codes.push_back(event.value);
    }
    return codes;
  }

 private:
  int fd_;
};

#if defined(__x86_64__)
constexpr unsigned short kData = 0x60, kCommand = 0x64;
constexpr unsigned char kInputFull = 0x02, kWriteKeyboardOutput = 0xd2;

void controller_write(unsigned short port, unsigned char byte) {
  const Deadline deadline(kWakeupBudget);
  while (inb(kCommand) & kInputFull) {
    if (deadline.expired()) throw ReproError("the i8042 controller never emptied its input buffer");
  }
  outb(byte, port);
}

// Whether this process may use the controller's ports: a child tries, and a missing grant kills it (SIGSEGV).
bool ports_granted() {
  const pid_t child = fork();
  check(child >= 0, "fork");
  if (child == 0) {
    (void)inb(kCommand);
    _exit(0);
  }
  int status = 0;
  check(waitpid(child, &status, 0) == child, "waitpid");
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

// The controller receives `byte` as if from the keyboard: IRQ1, and atkbd's interrupt handler. The ports are
// granted by the guest's runner (ioperm before exec, repro/guest/runner.cc): CAP_SYS_RAWIO is not kept.
void keyboard_sends(int byte) {
  if (!ports_granted()) {
    throw Unsupported("the keyboard controller's ports were not granted (the root pass of a sigwake guest with "
                      "CONFIG_X86_IOPL_IOPERM has them)");
  }
  controller_write(kCommand, kWriteKeyboardOutput);
  controller_write(kData, static_cast<unsigned char>(byte));
}
#else
void keyboard_sends(int) { throw Unsupported("no i8042 keyboard controller on this architecture"); }
#endif

// Decides from the reader's signal: one SIGIO with POLL_IN and our fd, for the event the keyboard sent;
// `astray` (when not empty) is how the case saw the signal or its owner go wrong.
void decide(Report& report, const SignalCapture& sigio, const Reader& reader, const std::vector<int>& codes,
            const std::string& astray = {}) {
  report.add("scan_codes", static_cast<long long>(codes.size()));
  if (!codes.empty()) report.add("scan_code", static_cast<long long>(codes.front()));
  add_signal_evidence(report, sigio);
  if (!astray.empty()) return report.decide(Verdict::kMisdelivered, astray);
  if (codes.empty()) return report.decide(Verdict::kNoRecord, "no scan code reached the reader");
  if (codes.front() != (kKeyABreak & 0x7f)) {
    return report.decide(Verdict::kMisdelivered, "the reader's scan code is not the one the keyboard sent");
  }
  if (sigio.count() == 0) return report.decide(Verdict::kNotDelivered, "the event was queued, no SIGIO came");
  const Delivery first = sigio.deliveries().front();
  if (first.code != POLL_IN || first.fd != reader.fd()) {
    return report.decide(Verdict::kMisdelivered, "SIGIO came without si_code POLL_IN and the reader's si_fd");
  }
  report.decide(Verdict::kDelivered, "the reader was signalled for the event");
}

std::string guest_keyboard() {
  if (!in_sigwake_guest()) throw Unsupported("sends events as the machine's keyboard: only on a machine sigwake booted");
  return keyboard_node();
}

// Only root's: the device node and the controller's ports. Nothing is claimed of the root pass: evdev is
// built in only where a kernel was built here with kernel-configs/input.config (Debian's is a module the
// guest cannot load), and facts cannot name a config; a verdict there other than delivered is a finding
// all the same ("nothing is known of this case here").
Expectation root_only() {
  return always(Verdict::kUnsupported, "the evdev node and the keyboard controller's ports are root's")
      .in_passes(kUserPasses);
}

const Words kInputConfig = {"CONFIG_INPUT_EVDEV", "CONFIG_KEYBOARD_ATKBD", "CONFIG_SERIO_I8042"};

}  // namespace

// drivers/input/evdev.c: __pass_event() calls kill_fasync() at SYN_REPORT, here in atkbd's interrupt handler.
SIGWAKE_CASE(evdev_sigio_irq, {.expected = {root_only()},
                               .defining = {"si_signo", "si_code"},
                               .shown = {"scan_codes", "signals", "si_code"},
                               .kconfig = kInputConfig + Words{"CONFIG_X86_IOPL_IOPERM"}}) {
  SignalCapture sigio(SIGIO);  // first in, last out: outlives the reader's O_ASYNC
  const Reader reader(guest_keyboard(), getpid());
  const long long before = keyboard_interrupts();
  keyboard_sends(kKeyABreak);
  sigio.wait_for(1, Deadline(kWakeupBudget));
  const long long interrupts = keyboard_interrupts() - before;
  report.add("keyboard_interrupts", interrupts);
  if (interrupts < 1) throw ReproError("the controller raised no keyboard interrupt: the path under test never ran");
  decide(report, sigio, reader, reader.scan_codes());
}

// evdev_write() passes an event to every reader through input_inject_event(), in process context; the reader
// is owned by our process group, so send_sigio() walks the group's tasks.
SIGWAKE_CASE(evdev_sigio_written, {.expected = {root_only()},
                                   .defining = {"si_signo", "si_code"},
                                   .shown = {"scan_codes", "signals", "si_code"},
                                   .kconfig = kInputConfig}) {
  SignalCapture sigio(SIGIO);
  const std::string node = guest_keyboard();
  const pid_t group = getpgrp();
  SignalWitness member(SIGIO);  // the walk of the group must reach it too, not only its leader
  const Reader reader(node, -group);
  const int writer = open(node.c_str(), O_WRONLY | O_CLOEXEC);
  check(writer >= 0, "open " + node + " to write");
  const input_event events[] = {{.type = EV_MSC, .code = MSC_SCAN, .value = kKeyABreak & 0x7f},
                                {.type = EV_SYN, .code = SYN_REPORT, .value = 0}};
  const bool written = write(writer, events, sizeof events) == sizeof events;
  close(writer);
  check(written, "write two events to " + node);
  sigio.wait_for(1, Deadline(kWakeupBudget));

  f_owner_ex owner{};
  check(fcntl(reader.fd(), F_GETOWN_EX, &owner) == 0, "fcntl(F_GETOWN_EX)");
  // glibc's F_GETOWN asks F_GETOWN_EX: the raw call reaches f_getown(), whose -pgid reads as an errno
  // to syscall() (within -4095..-1) or as its value.
  const long raw = syscall(SYS_fcntl, reader.fd(), F_GETOWN);
  const long getown = raw == -1 ? -static_cast<long>(errno) : raw;
  const bool owner_read_back = getown == -group && owner.type == F_OWNER_PGRP && owner.pid == group;
  const bool member_signalled = member.received();
  report.add("owner_read_back", owner_read_back);
  report.add("group_member_signalled", member_signalled);
  std::string astray;
  if (!owner_read_back) astray = "F_GETOWN or F_GETOWN_EX does not read back the owner";
  if (sigio.count() > 0 && !member_signalled) astray = "the group's leader was signalled, its other member was not";
  decide(report, sigio, reader, reader.scan_codes(), astray);
}

}  // namespace sigwake
