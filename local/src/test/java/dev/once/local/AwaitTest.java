package dev.once.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class AwaitTest {
  @Test
  void until_returnsAsSoonAsTheConditionHolds() {
    AtomicInteger polls = new AtomicInteger();
    Await.until(Duration.ofSeconds(5), () -> polls.incrementAndGet() >= 3, "three polls");
    assertEquals(3, polls.get());
  }

  @Test
  void until_failsAtTheDeadline_namingWhatItWaitedFor() {
    AssertionError e = assertThrows(AssertionError.class,
        () -> Await.until(Duration.ofMillis(50), () -> false, "the impossible"));
    assertTrue(e.getMessage().contains("the impossible"), e.getMessage());
  }

  @Test
  void aLongWait_pollsLessOftenThanAtFirst() {
    AtomicInteger polls = new AtomicInteger();
    assertThrows(AssertionError.class, () -> Await.until(Duration.ofMillis(600), () -> {
      polls.incrementAndGet();
      return false;
    }, "never"));
    // Every 10 ms throughout would be 60 polls; 10, 20, 40, then every 50 ms is about 14.
    assertTrue(polls.get() <= 20, polls.get() + " polls in 600 ms");
  }

  @Test
  void value_returnsTheFirstPresentValue() {
    AtomicInteger polls = new AtomicInteger();
    String value = Await.value(Duration.ofSeconds(5),
        () -> polls.incrementAndGet() < 2 ? Optional.empty() : Optional.of("ready"), "a value");
    assertEquals("ready", value);
  }

  @Test
  void aProbeThatFails_isPolledAgain_untilItAnswers() {
    AtomicInteger polls = new AtomicInteger();
    String value = Await.value(Duration.ofSeconds(30), () -> {
      if (polls.incrementAndGet() < 3) {
        throw new IllegalStateException("could not read Firestore: TimeoutException");
      }
      return Optional.of("read");
    }, "a read that fails twice");
    assertEquals("read", value);
    assertEquals(3, polls.get());
  }

  @Test
  void aProbeThatKeepsFailing_timesOut_withItsLastFailureAsTheCause() {
    IllegalStateException failure = new IllegalStateException("the emulator is down");
    AssertionError e = assertThrows(AssertionError.class,
        () -> Await.until(Duration.ofMillis(100), () -> {
          throw failure;
        }, "a read"));
    assertSame(failure, e.getCause());
    assertTrue(e.getMessage().contains("a read") && e.getMessage().contains("the emulator is down"), e.getMessage());
  }

  @Test
  void anErrorFromTheProbe_endsTheWaitAtOnce() {
    AtomicInteger polls = new AtomicInteger();
    AssertionError thrown = assertThrows(AssertionError.class, () -> Await.until(Duration.ofMinutes(5), () -> {
      polls.incrementAndGet();
      throw new AssertionError("the runner exited");
    }, "the runner to start"));
    assertEquals("the runner exited", thrown.getMessage());
    assertEquals(1, polls.get());
  }

  @Test
  void theLongerAWaitHasLasted_theLessOftenItPolls_upToEveryHalfSecond() {
    long ms = 1_000_000;
    assertEquals(20 * ms, Await.nextPoll(10 * ms, 10 * ms));
    assertEquals(50 * ms, Await.nextPoll(40 * ms, 100 * ms), "every 50 ms in the first second");
    assertEquals(100 * ms, Await.nextPoll(50 * ms, 2_000 * ms), "a twentieth of two seconds");
    assertEquals(500 * ms, Await.nextPoll(500 * ms, 60_000 * ms), "at most every 500 ms");
  }
}
