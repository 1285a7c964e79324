// Signal capture: counts, siginfo, the receiving thread, and bounded waits.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "../lib/signal_capture.h"

namespace sigwake {
namespace {

using namespace std::chrono_literals;

TEST(SignalCapture, BlockedUntilWaitedFor) {
  SignalCapture capture(SIGUSR1);
  ASSERT_EQ(kill(getpid(), SIGUSR1), 0);
  EXPECT_EQ(capture.count(), 0);  // blocked: pending, not yet handled
  EXPECT_TRUE(capture.wait_for(1, Deadline(2s)));
  EXPECT_EQ(capture.count(), 1);
  const auto deliveries = capture.deliveries();
  ASSERT_EQ(deliveries.size(), 1u);
  EXPECT_EQ(deliveries[0].signo, SIGUSR1);
  EXPECT_EQ(deliveries[0].code, SI_USER);
  EXPECT_EQ(deliveries[0].tid, gettid());
}

TEST(SignalCapture, WaitEndsAtTheDeadline) {
  SignalCapture capture(SIGUSR2);
  const std::int64_t start = monotonic_ns();
  EXPECT_FALSE(capture.wait_for(1, Deadline(20ms)));
  EXPECT_GE(monotonic_ns() - start, 20'000'000);
  EXPECT_EQ(capture.count(), 0);
}

TEST(SignalCapture, APendingSignalIsTakenEvenPastTheDeadline) {
  // Descheduled past the grace: the signal is pending, the deadline has passed.
  SignalCapture capture(SIGUSR1);
  const Deadline expired(0ms);
  ASSERT_EQ(kill(getpid(), SIGUSR1), 0);
  ASSERT_TRUE(expired.expired());
  EXPECT_TRUE(capture.wait_for(1, expired));
  EXPECT_EQ(capture.count(), 1);
}

TEST(SignalCapture, CollectTakesAPendingSignalWithNoGraceLeft) {
  SignalCapture capture(SIGUSR2);
  ASSERT_EQ(kill(getpid(), SIGUSR2), 0);
  EXPECT_EQ(capture.collect(0ns, 0ns), 1);
}

TEST(SignalCapture, RealTimeSignalsQueueEach) {
  const int signo = SIGRTMIN + 1;
  SignalCapture capture(signo);
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(sigqueue(getpid(), signo, sigval{i}), 0);
  }
  EXPECT_TRUE(capture.wait_for(3, Deadline(2s)));
  EXPECT_EQ(capture.count(), 3);
  for (const Delivery& d : capture.deliveries()) EXPECT_EQ(d.code, SI_QUEUE);
}

TEST(SignalCapture, SignalFromAnotherThreadWakesTheWaiter) {
  SignalCapture capture(SIGUSR1);
  std::thread sender([] { kill(getpid(), SIGUSR1); });
  EXPECT_TRUE(capture.wait_for(1, Deadline(2s)));
  sender.join();
  EXPECT_EQ(capture.count(), 1);
}

TEST(SignalCapture, AcceptPendingRunsTheHandlerWithoutWaiting) {
  SignalCapture capture(SIGUSR1);
  ASSERT_EQ(kill(getpid(), SIGUSR1), 0);
  capture.accept_pending();
  EXPECT_EQ(capture.count(), 1);
}

TEST(SignalCapture, RestoresTheMaskWhenDone) {
  { SignalCapture capture(SIGUSR2); }
  sigset_t mask;
  ASSERT_EQ(pthread_sigmask(SIG_SETMASK, nullptr, &mask), 0);
  EXPECT_EQ(sigismember(&mask, SIGUSR2), 0);
}

}  // namespace
}  // namespace sigwake
