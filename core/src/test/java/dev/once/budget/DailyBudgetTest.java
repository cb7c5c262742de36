package dev.once.budget;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.once.guard.Refusal;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.LedgerOptions;
import dev.once.ledger.LedgerUnavailable;
import dev.once.ledger.SideWrites;
import dev.once.observe.Log;
import dev.once.testing.InMemoryLedger;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The daily budget on the in-memory ledger, whose clock (the store's) the tests move. */
class DailyBudgetTest {
  private static final IdempotencyKey KEY = IdempotencyKey.of("gcs:inbox/invoice.pdf#1");
  private static final IdempotencyKey OTHER = IdempotencyKey.of("gcs:inbox/receipt.png#2");
  private volatile Instant now = Instant.parse("2026-11-30T10:00:00Z");
  private final InMemoryLedger ledger = new InMemoryLedger(LedgerOptions.defaults(), () -> now);
  private final CountingLedger counted = new CountingLedger(ledger);
  private final ByteArrayOutputStream logged = new ByteArrayOutputStream();

  private final Log log = Log.to(new PrintStream(logged, true, StandardCharsets.UTF_8));

  private DailyBudget budget(long limit, ZoneId zone) {
    return new DailyBudget(counted, limit, zone, log, "gemini budget");
  }

  private DaySpend spend(String day) {
    return new SpendCounters(ledger).read(LocalDate.parse(day));
  }

  @Test
  void noBudget_passesEveryCall_andReadsAndWritesNothing() throws Exception {
    Reservation reservation = Budget.NONE.reserve(KEY, 1_000_000_000L, reason -> SideWrites.NONE);
    assertTrue(reservation.none());
    ledger.commit(reservation.settle(5).and(reservation.release()));
    assertFalse(Budget.NONE.capped());
    assertFalse(Budget.NONE.exhausted());
    assertEquals(0, counted.reads() + counted.commits());
    assertTrue(ledger.collection(SpendCounters.COLLECTION).isEmpty(), "no counter written");
    assertEquals("", logged.toString(StandardCharsets.UTF_8), "no budget line");
  }

  @Test
  void aReservation_isAReadAnIncrementAndARead_andSettlingReplacesTheEstimateByTheCost() throws Exception {
    DailyBudget budget = budget(100_000, ZoneOffset.UTC);
    Reservation reservation = budget.reserve(KEY, 30_000, reason -> SideWrites.NONE);
    assertEquals(2, counted.reads(), "before, and after to see whether others reserved at the same moment");
    assertEquals(1, counted.commits());
    assertEquals(new DaySpend(LocalDate.parse("2026-11-30"), 0, 30_000), spend("2026-11-30"));

    ledger.commit(reservation.settle(321));
    assertEquals(new DaySpend(LocalDate.parse("2026-11-30"), 321, 0), spend("2026-11-30"));

    Reservation refusedByGemini = budget.reserve(OTHER, 40_000, reason -> SideWrites.NONE);
    ledger.commit(refusedByGemini.release());
    assertEquals(new DaySpend(LocalDate.parse("2026-11-30"), 321, 0), spend("2026-11-30"),
        "released: as if never made");
  }

  @Test
  void farFromTheEdge_aReservationIsOneIncrementAndOneRead_andTheReadStillDecides() throws Exception {
    DailyBudget budget = budget(100_000, ZoneOffset.UTC);
    budget.reserve(KEY, 10_000, reason -> SideWrites.NONE);
    int reads = counted.reads();
    budget.reserve(OTHER, 10_000, reason -> SideWrites.NONE);
    assertEquals(reads + 1, counted.reads(), "the day was a fifth used: no first read");

    // Another instance spends what this one has not seen: the second read sees it, and the call steps back.
    ledger.commit(new DailyBudget(ledger, 100_000, ZoneOffset.UTC, log, "gemini budget")
        .reserve(IdempotencyKey.of("gcs:inbox/elsewhere.pdf#3"), 75_000, reason -> SideWrites.NONE).settle(75_000));
    Refusal deferral = assertThrows(Refusal.class,
        () -> budget.reserve(IdempotencyKey.of("gcs:inbox/late.pdf#4"), 10_000, reason -> SideWrites.NONE));
    assertEquals(Refusal.Kind.DEFERRED, deferral.kind());
    assertTrue(deferral.getMessage().contains("others reserved at the same moment"), deferral.getMessage());
    assertEquals(95_000, spend("2026-11-30").totalMicroUsd(), "stepped back: its estimate is off again");
    assertEquals(Refusal.Kind.DEFERRED, assertThrows(Refusal.class,
        () -> budget.reserve(KEY, 10_000, reason -> SideWrites.NONE)).kind());
    assertEquals(95_000, spend("2026-11-30").totalMicroUsd(), "near the edge now: refused on the first read");
  }

  @Test
  void farFromTheEdge_isJudgedByTheLastReading_withoutAReadOfItsOwn() throws Exception {
    DailyBudget budget = budget(100_000, ZoneOffset.UTC);
    assertFalse(budget.farFromTheEdge(1), "nothing read yet: not known");
    assertTrue(Budget.NONE.farFromTheEdge(Long.MAX_VALUE));
    budget.reserve(KEY, 10_000, reason -> SideWrites.NONE);
    int reads = counted.reads();
    assertTrue(budget.farFromTheEdge(40_000), "10,000 + 40,000: half the day");
    assertFalse(budget.farFromTheEdge(40_001));
    assertEquals(reads, counted.reads(), "asked without a read");

    now = Instant.parse("2026-12-01T00:00:01Z");
    assertFalse(budget.farFromTheEdge(1), "a reading of yesterday says nothing of today");
  }

  @Test
  void aCallTheBudgetCannotTake_isDeferred_withTheCallersWrites_andNothingReserved() throws Exception {
    DailyBudget budget = budget(100_000, ZoneOffset.UTC);
    budget.reserve(KEY, 60_000, reason -> SideWrites.NONE);
    Refusal deferral = assertThrows(Refusal.class, () -> budget.reserve(OTHER, 40_001,
        reason -> writes -> writes.merge("analyses", "a2", Map.of("status", "deferred", "reason", reason))));
    assertEquals(Refusal.Kind.DEFERRED, deferral.kind());
    assertTrue(deferral.getMessage().contains("over the budget of 2026-11-30 (Z)"), deferral.getMessage());
    assertTrue(deferral.getMessage().contains("0.060000 USD + this call's estimate 0.040001 USD > 0.100000 USD"),
        deferral.getMessage());
    ledger.commit(deferral.writes());
    assertEquals(deferral.getMessage(), ledger.document("analyses", "a2").orElseThrow().get("reason"));
    assertEquals(60_000, spend("2026-11-30").totalMicroUsd(), "the refused call reserved nothing");
    budget.reserve(OTHER, 40_000, reason -> SideWrites.NONE); // exactly the rest fits
    assertTrue(budget.exhausted());
  }

  @Test
  void aCallLargerThanAWholeDaysBudget_waitsForALargerBudget_whatEverTheDaysSpend() throws Exception {
    DailyBudget budget = budget(100_000, ZoneOffset.UTC);
    assertTrue(budget.fitsADay(100_000));
    assertFalse(budget.fitsADay(100_001));
    assertTrue(Budget.NONE.fitsADay(Long.MAX_VALUE));

    Refusal deferral = assertThrows(Refusal.class, () -> budget.reserve(KEY, 100_001, reason -> SideWrites.NONE));
    assertEquals(Refusal.Kind.DEFERRED, deferral.kind());

    assertEquals("this call's estimate of 0.100001 USD alone is more than a whole day's budget of 0.100000 USD: it"
        + " waits for a larger budget", deferral.getMessage());
    assertEquals(0, spend("2026-11-30").totalMicroUsd(), "nothing reserved");
    budget.reserve(KEY, 100_000, reason -> SideWrites.NONE); // the whole day fits
  }

  @Test
  void eachReservation_logsAGeminiBudgetLine_withTheShareItWouldBring() throws Exception {
    DailyBudget budget = budget(100_000, ZoneOffset.UTC);
    budget.reserve(KEY, 79_999, reason -> SideWrites.NONE);
    assertEquals(Refusal.Kind.DEFERRED, assertThrows(Refusal.class,
        () -> budget.reserve(OTHER, 20_002, reason -> SideWrites.NONE)).kind());
    List<JsonNode> lines = lines();
    assertEquals(2, lines.size(), logged.toString(StandardCharsets.UTF_8));
    JsonNode granted = lines.get(0);
    assertEquals("gemini budget", granted.get("message").asText());
    assertEquals("2026-11-30", granted.get("day").asText());
    assertEquals(100_000, granted.get("budgetMicroUsd").asLong());
    assertEquals(0, granted.get("spentMicroUsd").asLong());
    assertEquals(79_999, granted.get("reservationMicroUsd").asLong());
    assertEquals(0.7999, granted.get("budgetShare").asDouble(), "its own estimate in; rounded down: not 80 % yet");
    assertTrue(granted.get("granted").asBoolean());
    assertFalse(granted.has(Log.LABELS), "not an event line: no outcome label");
    JsonNode refused = lines.get(1);
    assertEquals(79_999, refused.get("reservedMicroUsd").asLong());
    assertEquals(1.0, refused.get("budgetShare").asDouble());
    assertFalse(refused.get("granted").asBoolean());
    assertEquals("WARNING", refused.get("severity").asText());
  }

  @Test
  void theDay_isTheStoresDay_aReservationSettlesOnItsOwnDay_andMidnightBringsAFreshBudget() throws Exception {
    DailyBudget budget = budget(100_000, ZoneOffset.UTC);
    now = Instant.parse("2026-11-30T23:59:59Z");
    Reservation lateCall = budget.reserve(KEY, 90_000, reason -> SideWrites.NONE);
    assertEquals(Refusal.Kind.DEFERRED, assertThrows(Refusal.class,
        () -> budget.reserve(OTHER, 90_000, reason -> SideWrites.NONE)).kind());

    now = Instant.parse("2026-12-01T00:00:05Z");
    ledger.commit(lateCall.settle(500)); // its answer came after midnight: it cost yesterday
    assertEquals(new DaySpend(LocalDate.parse("2026-11-30"), 500, 0), spend("2026-11-30"));
    Reservation nextDay = budget.reserve(OTHER, 90_000, reason -> SideWrites.NONE);
    assertEquals(LocalDate.parse("2026-12-01"), nextDay.day());
    assertEquals(90_000, spend("2026-12-01").reservedMicroUsd());
  }

  @Test
  void theDayStartsAtMidnightInTheBudgetsZone() throws Exception {
    DailyBudget paris = budget(100_000, ZoneId.of("Europe/Paris"));
    now = Instant.parse("2026-11-30T22:30:00Z"); // 23:30 in Paris
    assertEquals(LocalDate.parse("2026-11-30"), paris.reserve(KEY, 1, reason -> SideWrites.NONE).day());
    now = Instant.parse("2026-11-30T23:30:00Z"); // 00:30 in Paris
    assertEquals(LocalDate.parse("2026-12-01"), paris.reserve(OTHER, 1, reason -> SideWrites.NONE).day());
  }

  @Test
  void countersThatCannotBeRead_refuseTheCallAsNotPerformed() {
    DailyBudget budget = new DailyBudget(new CountingLedger(ledger) {
      @Override
      public Map<String, Long> sum(String collection, List<String> ids, String field, Object value,
          List<String> fields) {
        throw new LedgerUnavailable("Firestore did not answer", null);
      }
    }, 100_000, ZoneOffset.UTC, log, "gemini budget");
    assertEquals(Refusal.Kind.NOT_PERFORMED, assertThrows(Refusal.class,
        () -> budget.reserve(KEY, 1, reason -> SideWrites.NONE)).kind());
  }

  @Test
  void aReservation_survivesItsRecord_andOneNeverReadIsNone() {
    Reservation reservation = new Reservation(LocalDate.parse("2026-11-30"), 7, 21_021);
    assertEquals(reservation, Reservation.fromMap(reservation.toMap()));
    assertTrue(Reservation.fromMap(null).none());
    assertTrue(Reservation.fromMap(Map.of("day", "yesterday", "shard", 1L, "microUsd", 2L)).none());
    assertEquals(null, Reservation.NONE.toMap());
  }

  @Test
  void keysSpreadOverEveryCounter() {
    Set<Integer> used = new HashSet<>();
    for (int i = 0; i < 400; i++) {
      used.add(SpendCounters.shardOf(IdempotencyKey.of("gcs:inbox/doc-" + i + ".pdf#1")));
    }
    assertEquals(SpendCounters.SHARDS, used.size());
  }

  private List<JsonNode> lines() throws Exception {
    List<JsonNode> lines = new ArrayList<>();
    ObjectMapper json = new ObjectMapper();
    for (String line : logged.toString(StandardCharsets.UTF_8).split("\n")) {
      if (!line.isBlank()) {
        lines.add(json.readTree(line));
      }
    }
    return lines;
  }
}
