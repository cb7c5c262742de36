package dev.once.firestore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.cloud.Timestamp;
import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.QueryDocumentSnapshot;
import dev.once.budget.DailyBudget;
import dev.once.budget.DaySpend;
import dev.once.budget.Reservation;
import dev.once.budget.SpendCounters;
import dev.once.guard.Refusal;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.Claim;
import dev.once.ledger.ClaimOptions;
import dev.once.ledger.ClaimResult;
import dev.once.ledger.LedgerOptions;
import dev.once.ledger.SideWrites;
import dev.once.observe.Log;
import io.grpc.Status;
import java.io.OutputStream;
import java.io.PrintStream;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The spending guard's writes with their answers lost on the wire ({@link LostAnswers}), against the real Firestore
 * client and the emulator: a reservation, its step-back and its settlement, each lost once, twice and late, and a
 * storm of 1,000 reservations with a tenth of the commits' answers lost. The day's counters are asserted to the
 * micro-USD: a commit the client resent must not be added twice.
 */
class DailyBudgetResendTest {
  private static final String COMMIT = "Commit";
  private static final LostAnswers faults = new LostAnswers();
  private static final Firestore lossy = LostAnswers.client(faults);

  private final FirestoreLedger ledger = new FirestoreLedger(lossy, LedgerOptions.defaults());
  private final FirestoreLedger other = new FirestoreLedger(TestFirestore.client(), LedgerOptions.defaults());

  @BeforeEach
  void clear() {
    faults.stop();
    TestFirestore.clear();
    ledger.now();
  }

  @AfterAll
  static void close() throws Exception {
    lossy.close();
  }

  private static final Log QUIET = Log.to(new PrintStream(OutputStream.nullOutputStream(), true));

  private DailyBudget budget(long limit) {
    return new DailyBudget(ledger, limit, ZoneOffset.UTC, QUIET, "gemini budget");
  }

  private DaySpend day() {
    SpendCounters counters = new SpendCounters(other);
    return counters.read(counters.today(ZoneOffset.UTC));
  }

  private static IdempotencyKey key(String name) {
    return IdempotencyKey.of("gcs:inbox/" + name + ".pdf#1");
  }

  @Test
  void aReservationWhoseAnswerIsLostOnceTwiceOrLate_holdsItsEstimateOnce() throws Exception {
    DailyBudget budget = budget(1_000_000);
    List<List<Status.Code>> losses = List.of(List.of(Status.Code.UNAVAILABLE),
        List.of(Status.Code.UNAVAILABLE, Status.Code.UNAVAILABLE), List.of(Status.Code.DEADLINE_EXCEEDED));
    long reserved = 0;
    for (int i = 0; i < losses.size(); i++) {
      int before = faults.calls(COMMIT);
      losses.get(i).forEach(how -> faults.loseNext(COMMIT, 1, how));

      budget.reserve(key("reserved-" + i), 10_001 + i, reason -> SideWrites.NONE);

      reserved += 10_001 + i;
      assertEquals(reserved, day().reservedMicroUsd(), "the estimate is held once: " + losses.get(i));
      assertEquals(0, day().spentMicroUsd());
      int resent = losses.get(i).get(0) == Status.Code.UNAVAILABLE ? losses.get(i).size() : 0;
      assertEquals(1 + resent, faults.calls(COMMIT) - before, "commits on the wire: " + losses.get(i));
    }
  }

  @Test
  void aStepBackWhoseAnswerIsLostOnceTwiceOrLate_takesTheEstimateOffOnce() throws Exception {
    List<List<Status.Code>> losses = List.of(List.of(Status.Code.UNAVAILABLE),
        List.of(Status.Code.UNAVAILABLE, Status.Code.UNAVAILABLE), List.of(Status.Code.DEADLINE_EXCEEDED));
    for (List<Status.Code> loss : losses) {
      TestFirestore.clear();
      DailyBudget budget = budget(1_000);
      budget.reserve(key("first"), 100, reason -> SideWrites.NONE); // this instance now sees the day far from its edge
      new DailyBudget(other, 1_000, ZoneOffset.UTC, QUIET, "gemini budget").reserve(key("meanwhile"), 850,
          r -> SideWrites.NONE);
      // The next reservation skips its first read, adds 200, reads 1,150 and steps back: that step-back loses its
      // answer (the increment before it is let through).
      faults.letThrough(COMMIT, 1);
      loss.forEach(how -> faults.loseNext(COMMIT, 1, how));

      assertEquals(Refusal.Kind.DEFERRED, assertThrows(Refusal.class,
          () -> budget.reserve(key("late"), 200, reason -> SideWrites.NONE)).kind());

      assertEquals(new DaySpend(day().day(), 0, 950), day(), "taken off once: " + loss);
    }
  }

  @Test
  void theMarkersExpireADayAfterTheirCommit_theCountersNever() throws Exception {
    DailyBudget budget = budget(1_000);
    budget.reserve(key("first"), 100, reason -> SideWrites.NONE);
    new DailyBudget(other, 1_000, ZoneOffset.UTC, QUIET, "gemini budget").reserve(key("meanwhile"), 850,
        r -> SideWrites.NONE);
    Instant now = other.now();
    assertEquals(Refusal.Kind.DEFERRED, assertThrows(Refusal.class,
        () -> budget.reserve(key("late"), 200, reason -> SideWrites.NONE)).kind()); // and steps back

    Map<String, Instant> markers = new TreeMap<>();
    int counters = 0;
    for (QueryDocumentSnapshot document : TestFirestore.client().collection(SpendCounters.COLLECTION).get().get()) {
      if (document.contains(SpendCounters.RESERVED)) {
        counters++;
        assertEquals(null, document.get(SpendCounters.EXPIRE_AT), "a counter is kept: " + document.getId());
      } else {
        Timestamp expireAt = document.getTimestamp(SpendCounters.EXPIRE_AT);
        assertNotNull(expireAt, "a marker expires: " + document.getId());
        markers.put(document.getId(), expireAt.toDate().toInstant());
      }
    }
    assertTrue(counters >= 1);
    assertEquals(3, markers.keySet().stream().filter(id -> id.endsWith("-reserved")).count(), markers::toString);
    assertEquals(1, markers.keySet().stream().filter(id -> id.endsWith("-stepped-back")).count(), markers::toString);
    assertEquals(4, markers.size(), "three reservations and a step-back: " + markers);
    for (Instant expireAt : markers.values()) {
      Duration kept = Duration.between(now, expireAt);
      assertTrue(kept.compareTo(Duration.ofDays(1).minusMinutes(1)) > 0 && kept.compareTo(Duration.ofDays(1)
          .plusMinutes(1)) < 0, "a day on: " + kept);
    }
  }

  @Test
  void aSettlementInTheCompletingCommit_itsAnswerLostOnceTwiceOrLate_replacesTheEstimateOnce() throws Exception {
    DailyBudget budget = budget(1_000_000);
    List<List<Status.Code>> losses = List.of(List.of(Status.Code.UNAVAILABLE),
        List.of(Status.Code.UNAVAILABLE, Status.Code.UNAVAILABLE), List.of(Status.Code.DEADLINE_EXCEEDED));
    long spent = 0;
    for (int i = 0; i < losses.size(); i++) {
      IdempotencyKey key = key("settled-" + i);
      Claim claim = ((ClaimResult.Acquired) ledger.claim(key, "analyse", ClaimOptions.DEFAULTS)).claim();
      Reservation reservation = budget.reserve(key, 50_000, reason -> SideWrites.NONE);
      losses.get(i).forEach(how -> faults.loseNext(COMMIT, 1, how));

      ledger.complete(claim, Map.of("status", "analysed"), reservation.settle(1_234 + i));

      spent += 1_234 + i;
      assertEquals(new DaySpend(day().day(), spent, 0), day(), "settled once: " + losses.get(i));
    }
  }

  /**
   * 1,000 reservations from 4 instances, 16 at a time, near the day's edge, with one commit answer in ten lost (and
   * resent by the client); of the granted ones, every other is settled in its completing commit (also lossy). The
   * day's counters must equal the bills plus the reservations still open, exactly.
   */
  @Test
  void aStormOfReservations_withATenthOfTheAnswersLost_leavesCountersEqualToBillsPlusOpenReservations()
      throws Exception {
    int calls = 1_000;
    long limit = 800_000;
    List<DailyBudget> instances = List.of(budget(limit), budget(limit), budget(limit), budget(limit));
    Random estimates = new Random(21);
    long[] estimate = new long[calls];
    for (int i = 0; i < calls; i++) {
      estimate[i] = 1_000 + estimates.nextInt(1_000);
    }
    AtomicLong bills = new AtomicLong();
    AtomicLong open = new AtomicLong();
    AtomicLong deferred = new AtomicLong();
    faults.loseAtRandom(COMMIT, 0.10, 21, Status.Code.UNAVAILABLE);
    int commitsBefore = faults.calls(COMMIT);
    long started = System.nanoTime();
    ExecutorService pool = Executors.newFixedThreadPool(16);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int n = 0; n < calls; n++) {
        int i = n;
        done.add(pool.submit(() -> {
          IdempotencyKey key = key("storm-" + i);
          Reservation reservation;
          try {
            reservation = instances.get(i % instances.size()).reserve(key, estimate[i], reason -> SideWrites.NONE);
          } catch (Refusal over) {
            if (!over.is(Refusal.Kind.DEFERRED)) {
              throw over;
            }
            deferred.incrementAndGet();
            return null;
          }
          if (i % 2 == 0) {
            long bill = estimate[i] / 3;
            Claim claim = ((ClaimResult.Acquired) ledger.claim(key, "analyse", ClaimOptions.DEFAULTS)).claim();
            ledger.complete(claim, Map.of("status", "analysed"), reservation.settle(bill));
            bills.addAndGet(bill);
          } else {
            open.addAndGet(estimate[i]);
          }
          return null;
        }));
      }
      for (Future<?> future : done) {
        future.get();
      }
    } finally {
      pool.shutdownNow();
    }
    long took = (System.nanoTime() - started) / 1_000_000;
    faults.stop();
    int commits = faults.calls(COMMIT) - commitsBefore;
    int lost = faults.lost(COMMIT);
    System.out.printf("budget storm: %d reservations (%d deferred), %d commits, %d answers lost, %d ms%n", calls,
        deferred.get(), commits, lost, took);

    DaySpend day = day();
    assertEquals(bills.get(), day.spentMicroUsd(), "spent = the bills settled");
    assertEquals(open.get(), day.reservedMicroUsd(), "reserved = the reservations still open");
    assertTrue(day.totalMicroUsd() <= limit, "within the budget: " + day);
    assertTrue(lost >= commits / 20, "answers were lost: " + lost + " of " + commits);
    assertTrue(deferred.get() > 0, "the storm reached the day's edge");
  }
}
