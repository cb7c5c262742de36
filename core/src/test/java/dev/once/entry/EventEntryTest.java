package dev.once.entry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.once.guard.Completion;
import dev.once.guard.Once;
import dev.once.guard.Policy;
import dev.once.internal.entry.Redeliver;
import dev.once.key.IdempotencyKey;
import dev.once.key.InvalidKey;
import dev.once.observe.Log;
import dev.once.testing.InMemoryLedger;
import io.cloudevents.CloudEvent;
import io.cloudevents.core.builder.CloudEventBuilder;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Test;

/** The CloudEvent entry helper: parse → key → run → one log line → acknowledge or redeliver. */
class EventEntryTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final Once once = new Once(new InMemoryLedger());
  private final AtomicInteger runs = new AtomicInteger();

  private final Log log = Log.to(new PrintStream(out, true, StandardCharsets.UTF_8));

  private List<JsonNode> lines() {
    return out.toString(StandardCharsets.UTF_8).lines().map(line -> {
      try {
        return JSON.readTree(line);
      } catch (Exception e) {
        throw new IllegalStateException(e);
      }
    }).toList();
  }

  private static CloudEvent event(String id, String data) {
    return CloudEventBuilder.v1().withId(id).withSource(URI.create("//test")).withType("t")
        .withExtension("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
        .withData("text/plain", data.getBytes(StandardCharsets.UTF_8)).build();
  }

  private final EventEntry<String> entry = EventEntry.of("Orders",
      event -> {
        String data = new String(event.getData().toBytes(), StandardCharsets.UTF_8);
        if (data.isBlank()) {
          throw new MalformedEvent("no order");
        }
        return data;
      },
      order -> IdempotencyKey.of("order:" + order),
      (order, key) -> Report.of(key, "ship", once.run(key, "ship", attempt -> {
        runs.incrementAndGet();
        return Completion.of(Map.of());
      }))).loggingTo(log);

  @Test
  void aDeliveryAndItsDuplicate_runTheEffectOnce_eachLoggingOneLineWithItsTrace() {
    entry.accept(event("1", "42"));
    entry.accept(event("2", "42"));
    assertEquals(1, runs.get());
    List<JsonNode> lines = lines();
    assertEquals(2, lines.size());
    assertEquals("processed", lines.get(0).path("outcome").asText());
    assertEquals("duplicate", lines.get(1).path("outcome").asText());
    // The key is named by its hash, never itself (it may hold an object name): the same hash on both lines.
    assertEquals(IdempotencyKey.logHash("order:42"), lines.get(1).path("keyHash").asText());
    assertEquals(lines.get(0).path("keyHash"), lines.get(1).path("keyHash"));
    assertEquals(16, lines.get(1).path("keyHash").asText().length());
    assertTrue(lines.stream().noneMatch(line -> line.toString().contains("order:42")), lines.toString());
    assertEquals("2", lines.get(1).path("eventId").asText());
    assertEquals("00f067aa0ba902b7", lines.get(1).path(Log.SPAN_ID).asText());
  }

  @Test
  void aMalformedEvent_isAcknowledgedWithOneLine_andNothingRuns() {
    entry.accept(event("3", " "));
    assertEquals(0, runs.get());
    assertEquals("rejected", lines().get(0).path("outcome").asText());
    assertEquals("no order", lines().get(0).path("reason").asText());
  }

  @Test
  void anEventNoKeyCanBeMadeOf_isAcknowledgedWithOneLine() {
    EventEntry<String> keyless = EventEntry.of("Orders", event -> "x", order -> {
      throw new InvalidKey("no key in " + order);
    }, (order, key) -> {
      throw new AssertionError("not run");
    }).loggingTo(log);
    keyless.accept(event("4", "x"));
    assertEquals("rejected", lines().get(0).path("outcome").asText());
  }

  @Test
  void anEventHeldByAnotherDelivery_isThrownBack_soThePlatformRedelivers() throws Exception {
    IdempotencyKey key = IdempotencyKey.of("order:7");
    once.run(key, "ship", attempt -> {
      Redeliver redeliver = assertThrows(Redeliver.class, () -> entry.accept(event("5", "7")));
      assertTrue(redeliver.getMessage().contains("order:7"));
      return Completion.of(Map.of());
    });
    assertEquals("in_flight", lines().get(0).path("outcome").asText());
  }

  @Test
  void aFailure_isLoggedAndThrown_soThePlatformRedelivers() {
    EventEntry<String> failing = EventEntry.of("Orders", event -> "9", order -> IdempotencyKey.of("order:9"),
        (order, key) -> {
          throw new IllegalStateException("Firestore unavailable");
        }).loggingTo(log);
    assertThrows(IllegalStateException.class, () -> failing.accept(event("6", "9")));
    JsonNode line = lines().get(0);
    assertEquals("failed", line.path("outcome").asText());
    assertEquals(IdempotencyKey.logHash("order:9"), line.path("keyHash").asText());
    assertFalse(line.toString().contains("order:9"), line.toString());
    assertFalse(line.path("error").asText().isEmpty());
  }

  @Test
  void anEventOfOneEffect_runsItOnce_andReportsItsOutcome() {
    EventEntry<String> single = EventEntry.of("Orders", event -> new String(event.getData().toBytes(),
        StandardCharsets.UTF_8), order -> IdempotencyKey.of("order", order),
        EventEntry.effect(once, "ship", Policy.DEFAULT, (order, attempt) -> {
          runs.incrementAndGet();
          return Completion.of(Map.of("order", order));
        })).loggingTo(log);
    single.accept(event("7", "88"));
    single.accept(event("8", "88"));
    assertEquals(1, runs.get());
    assertEquals(List.of("processed", "duplicate"), lines().stream().map(l -> l.path("outcome").asText()).toList());
    assertEquals("ship", lines().get(1).path("effect").asText());
  }

  @Test
  void aFunctionNameOutsideCloudFunctionsRule_isRefused() {
    for (String name : new String[] {"", "9lives", "send welcome", "x".repeat(64)}) {
      Assertions.assertThrows(IllegalArgumentException.class,
          () -> EventEntry.of(name, event -> "x", order -> IdempotencyKey.of("k"), (order, key) -> null), name);
    }
  }
}
