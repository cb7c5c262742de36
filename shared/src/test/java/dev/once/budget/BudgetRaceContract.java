package dev.once.budget;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.once.guard.Deferral;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.Ledger;
import dev.once.ledger.SideWrites;
import dev.once.observe.Log;
import java.io.OutputStream;
import java.io.PrintStream;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;

/**
 * The stated bound, under 16 threads racing for the last dollars of the day: spent + reserved never exceeds the budget
 * by more than 15 reservations (one per other thread reserving at the same moment), no increment is lost, and the
 * budget is never under-used. Run against each ledger ({@code InMemoryLedger}, and Firestore on the emulator).
 */
abstract class BudgetRaceContract {
  static final int THREADS = 16;
  static final long ESTIMATE = 21_021;
  static final long LIMIT = 1_000_000;
  /** Spent before the race: two and a half estimates are left. */
  static final long SPENT_BEFORE = LIMIT - 5 * ESTIMATE / 2;

  /** A ledger on a store emptied before each test. */
  abstract Ledger ledger();

  @BeforeEach
  void quiet() {
    Log.redirect(new PrintStream(OutputStream.nullOutputStream()));
  }

  @AfterEach
  void restoreLog() {
    Log.redirect(System.out);
  }

  /** Today's spend before the race: two and a half estimates short of the budget. */
  private static void spendAllButTheLastDollars(Ledger ledger) {
    LocalDate day = new SpendCounters(ledger).today(ZoneOffset.UTC);
    ledger.commit(SpendCounters.add(day, 0, 0, SPENT_BEFORE));
  }

  /** What each thread got: its reservation, or null when deferred. */
  private static List<Reservation> race(Ledger ledger) throws Exception {
    DailyBudget budget = new DailyBudget(ledger, LIMIT, ZoneOffset.UTC, "gemini budget");
    ExecutorService pool = Executors.newFixedThreadPool(THREADS);
    try {
      CountDownLatch start = new CountDownLatch(1);
      List<Future<Reservation>> racing = new ArrayList<>();
      for (int t = 0; t < THREADS; t++) {
        IdempotencyKey key = IdempotencyKey.of("gcs:inbox/race-" + t + ".pdf#1");
        racing.add(pool.submit(() -> {
          start.await();
          try {
            return budget.reserve(key, ESTIMATE, reason -> SideWrites.NONE);
          } catch (Deferral deferred) {
            return null;
          }
        }));
      }
      start.countDown();
      List<Reservation> got = new ArrayList<>();
      for (Future<Reservation> thread : racing) {
        got.add(thread.get(60, TimeUnit.SECONDS));
      }
      return got;
    } finally {
      pool.shutdownNow();
    }
  }

  private static long granted(List<Reservation> got) {
    return got.stream().filter(r -> r != null).count();
  }

  private DaySpend today(Ledger ledger) {
    SpendCounters counters = new SpendCounters(ledger);
    return counters.read(counters.today(ZoneOffset.UTC));
  }

  @RepeatedTest(3)
  void sixteenThreadsRacingForTheLastDollars_overshootByAtMostOneReservationPerOtherThread() throws Exception {
    Ledger ledger = ledger();
    spendAllButTheLastDollars(ledger);
    List<Reservation> got = race(ledger);
    long granted = granted(got);
    DaySpend after = today(ledger);
    assertEquals(SPENT_BEFORE + granted * ESTIMATE, after.totalMicroUsd(), "every granted reservation counted, once");
    assertTrue(granted >= 2, "what fits is never refused: 2 fit, " + granted + " granted");
    assertTrue(after.totalMicroUsd() <= LIMIT + (THREADS - 1) * ESTIMATE,
        "spent + reserved " + after.totalMicroUsd() + " within the budget + 15 estimates");
    for (Reservation reservation : got) {
      if (reservation != null) {
        ledger.commit(reservation.settle(321));
      }
    }
    DaySpend settled = today(ledger);
    assertEquals(0, settled.reservedMicroUsd(), "every reservation settled");
    assertEquals(SPENT_BEFORE + granted * 321, settled.spentMicroUsd());
  }

  @Test
  void whenEveryThreadReadsBeforeAnyReserves_theOvershootReachesItsBound_andNoFurther() throws Exception {
    Ledger ledger = ledger();
    spendAllButTheLastDollars(ledger);
    CountDownLatch allRead = new CountDownLatch(THREADS);
    // Holds each reservation's increment until all sixteen have read the day: the worst interleaving there is.
    Ledger lockstep = new CountingLedger(ledger) {
      @Override
      public Map<String, Map<String, Object>> read(String collection, List<String> ids) {
        Map<String, Map<String, Object>> found = super.read(collection, ids);
        allRead.countDown();
        return found;
      }

      @Override
      public void commit(SideWrites writes) {
        try {
          if (!allRead.await(60, TimeUnit.SECONDS)) {
            throw new IllegalStateException("not every thread read the day");
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException(e);
        }
        super.commit(writes);
      }
    };
    List<Reservation> got = race(lockstep);
    DaySpend after = today(ledger);
    assertEquals(THREADS, granted(got), "all read the same day, so all passed");
    assertEquals(SPENT_BEFORE + THREADS * ESTIMATE, after.totalMicroUsd());
    assertTrue(after.totalMicroUsd() <= LIMIT + (THREADS - 1) * ESTIMATE, "the stated bound holds at its worst");
    assertTrue(after.totalMicroUsd() > LIMIT + (THREADS - 3) * ESTIMATE, "and is what a race can reach");
  }
}
