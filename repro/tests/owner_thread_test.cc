// The owner-thread arrangement can fail: a process-directed signal lands on the
// decoy, a thread-directed one waits for the owner. So a kernel that treats
// F_OWNER_TID like F_OWNER_PID is caught, not hidden.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>

#include "../lib/owner_thread.h"

namespace sigwake {
namespace {

using namespace std::chrono_literals;

TEST(OwnerThread, AProcessDirectedSignalLandsOnTheDecoy) {
  SignalCapture capture(SIGUSR1);
  OwnerThread owner(capture);
  {
    const SignalCapture::Unblocked decoy(capture);
    ASSERT_EQ(kill(getpid(), SIGUSR1), 0);  // what F_OWNER_PID delivery does
    EXPECT_TRUE(capture.wait_for(1, Deadline(2s)));
  }
  owner.take();
  ASSERT_EQ(capture.count(), 1);
  EXPECT_EQ(capture.deliveries()[0].tid, gettid());
  EXPECT_NE(capture.deliveries()[0].tid, owner.tid());
}

TEST(OwnerThread, AThreadDirectedSignalWaitsForTheOwner) {
  SignalCapture capture(SIGUSR2);
  OwnerThread owner(capture);
  {
    const SignalCapture::Unblocked decoy(capture);
    ASSERT_EQ(syscall(SYS_tgkill, getpid(), owner.tid(), SIGUSR2), 0);  // what F_OWNER_TID delivery does
    EXPECT_FALSE(capture.wait_for(1, Deadline(30ms)));  // the decoy never gets it
  }
  owner.take();
  ASSERT_EQ(capture.count(), 1);
  EXPECT_EQ(capture.deliveries()[0].tid, owner.tid());
}

}  // namespace
}  // namespace sigwake
