package dev.once.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
}
