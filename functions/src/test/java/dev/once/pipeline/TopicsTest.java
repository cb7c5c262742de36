package dev.once.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class TopicsTest {
  @Test
  void idsAndFullNames_bothGiveTheFullName() {
    assertEquals("projects/p/topics/results", Topics.fullName("p", "results"));
    assertEquals("projects/other/topics/results", Topics.fullName("p", " projects/other/topics/results "));
    assertEquals("projects/other/topics/results", Topics.fullName(null, "projects/other/topics/results"));
  }

  @ParameterizedTest
  @ValueSource(
      strings = {"", "a", "goog-topic", "projects/p/topics/", "projects/p/subscriptions/s", "has space", "1abc"})
  void invalidTopics_areRefused(String topic) {
    assertThrows(IllegalArgumentException.class, () -> Topics.fullName("p", topic));
  }

  @Test
  void anIdWithoutAProject_saysWhatToSet() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Topics.fullName(null, "results"));
    assertEquals(true, e.getMessage().contains("GOOGLE_CLOUD_PROJECT"));
  }
}
