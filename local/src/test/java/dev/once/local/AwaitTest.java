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
  void value_returnsTheFirstPresentValue() {
    AtomicInteger polls = new AtomicInteger();
    String value = Await.value(Duration.ofSeconds(5),
        () -> polls.incrementAndGet() < 2 ? Optional.empty() : Optional.of("ready"), "a value");
    assertEquals("ready", value);
  }
}
