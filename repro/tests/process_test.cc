// The processes a reproducer arranges: a signal witness says what it got, and ends by itself once its maker is
// done with it (a witness of another uid may be one its maker cannot kill).
#include <gtest/gtest.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>

#include "../lib/errors.h"
#include "../lib/process.h"

namespace sigwake {
namespace {

using namespace std::chrono_literals;

TEST(SignalWitness, SaysWhetherItGotTheSignal) {
  SignalWitness signalled(SIGUSR1), quiet(SIGUSR1);
  ASSERT_EQ(kill(signalled.pid(), SIGUSR1), 0);
  EXPECT_TRUE(signalled.received(1000ms));
  EXPECT_FALSE(quiet.received(20ms));
}

TEST(SignalWitness, ASignalSentBeforeItWaitsStillCounts) {
  // The setup runs with the signal blocked: one sent to itself then is pending, and taken once it waits.
  SignalWitness early(SIGUSR2, [] { raise(SIGUSR2); });
  EXPECT_TRUE(early.received(1000ms));
}

TEST(SignalWitness, EndsByItselfWhenItsMakerCannotKillIt) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root: a witness of another uid, and CAP_KILL to drop";
  const pid_t maker = fork();
  ASSERT_GE(maker, 0);
  if (maker == 0) {
    alarm(10);  // the bound: a maker stuck reaping its witness dies of SIGALRM, and the test sees it
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3]{};
    if (syscall(SYS_capget, &header, data) != 0) _exit(2);
    data[CAP_KILL / 32].effective &= ~(1u << (CAP_KILL % 32));
    if (syscall(SYS_capset, &header, data) != 0) _exit(2);
    {
      SignalWitness stranger(SIGUSR1, [] { check(setresuid(65534, 65534, 65534) == 0, "setresuid"); });
      if (kill(stranger.pid(), SIGKILL) == 0) _exit(3);  // it must be one we cannot kill, or this shows nothing
    }  // its destructor returns only once the witness has ended and been reaped
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(maker, &status, 0), maker);
  ASSERT_TRUE(WIFEXITED(status)) << "the maker was killed (signal " << WTERMSIG(status) << "): it never got its "
                                    "witness back";
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(SignalWitness, ASetupThatFailsIsAnErrorNotAWitness) {
  EXPECT_THROW(SignalWitness(SIGUSR1, [] { throw ReproError("no"); }), ReproError);
}

TEST(Machine, ANativeRunIsNoGuestOfSigwakes) {
  // This test runs from the build tree, not from an initramfs's /repro/: no case may change this machine.
  EXPECT_FALSE(in_sigwake_guest());
}

TEST(Pipe, CarriesWordsUntilTheWriterIsGone) {
  Pipe pipe;
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    pipe.close_read_end();
    pipe.send("a reason, in words");
    _exit(0);
  }
  pipe.close_write_end();
  EXPECT_EQ(pipe.read_to_end(), "a reason, in words");  // returns at EOF: the child's exit closed its end
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
}

}  // namespace
}  // namespace sigwake
