package dev.once.firestore;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.once.budget.DailyBudget;
import dev.once.budget.DaySpend;
import dev.once.budget.Reservation;
import dev.once.budget.SpendCounters;
import dev.once.guard.Refusal;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.ForwardingLedger;
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
import java.util.function.IntFunction;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;

/**
 * Sixteen threads racing for the last dollars of the day, two and a half estimates of them: what the granted calls
 * may cost never exceeds the budget, however the race goes, and no increment is lost. In one instance they take
 * turns, so exactly the two that fit pass; as sixteen instances, every interleaving keeps under the budget, the worst
 * one at the price of all stepping back (deferred, for a later try). Run against each ledger ({@code InMemoryLedger},
 * and Firestore on the emulator).
 */
abstract class BudgetRaceContract {
  static final int THREADS = 16;
  static final long ESTIMATE = 21_021;
  static final long LIMIT = 1_000_000;
  /** Spent before the race: two and a half estimates are left. */
  static final long SPENT_BEFORE = LIMIT - 5 * ESTIMATE / 2;

  /** A ledger on a store emptied before each test. */
  abstract Ledger ledger();

  private static final Log QUIET = Log.to(new PrintStream(OutputStream.nullOutputStream()));

  private static void spendAllButTheLastDollars(Ledger ledger) {
    LocalDate day = new SpendCounters(ledger).today(ZoneOffset.UTC);
    ledger.commit(SpendCounters.add(day, 0, 0, SPENT_BEFORE));
  }

  private static DailyBudget budget(Ledger ledger) {
    return new DailyBudget(ledger, LIMIT, ZoneOffset.UTC, QUIET, "gemini budget");
  }

  /** What each thread got, reserving through {@code budgetOfThread}: its reservation, or null when deferred. */
  private static List<Reservation> race(IntFunction<DailyBudget> budgetOfThread) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(THREADS);
    try {
      CountDownLatch start = new CountDownLatch(1);
      List<Future<Reservation>> racing = new ArrayList<>();
      for (int t = 0; t < THREADS; t++) {
        IdempotencyKey key = IdempotencyKey.of("gcs:inbox/race-" + t + ".pdf#1");
        DailyBudget budget = budgetOfThread.apply(t);
        racing.add(pool.submit(() -> {
          start.await();
          try {
            return budget.reserve(key, ESTIMATE, reason -> SideWrites.NONE);
          } catch (Refusal deferred) {
            if (!deferred.is(Refusal.Kind.DEFERRED)) {
              throw deferred;
            }
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

  private static DaySpend today(Ledger ledger) {
    SpendCounters counters = new SpendCounters(ledger);
    return counters.read(counters.today(ZoneOffset.UTC));
  }

  /** Every granted reservation is counted once, and nothing else is: the cap holds, then settling keeps it. */
  private static void assertCountedOnce_andUnderTheBudget(Ledger ledger, List<Reservation> got) {
    long granted = granted(got);
    DaySpend after = today(ledger);
    assertEquals(SPENT_BEFORE + granted * ESTIMATE, after.totalMicroUsd(), "every granted reservation counted, once");
    assertTrue(after.totalMicroUsd() <= LIMIT, "spent + reserved " + after.totalMicroUsd() + " within " + LIMIT);
    for (Reservation reservation : got) {
      if (reservation != null) {
        ledger.commit(reservation.settle(321));
      }
    }
    assertEquals(new DaySpend(after.day(), SPENT_BEFORE + granted * 321, 0), today(ledger), "every one settled");
  }

  @RepeatedTest(3)
  void sixteenThreadsOfOneInstance_takeTurns_andExactlyTheTwoThatFitPass() throws Exception {
    Ledger ledger = ledger();
    spendAllButTheLastDollars(ledger);
    DailyBudget shared = budget(ledger);
    List<Reservation> got = race(thread -> shared);
    assertEquals(2, granted(got));
    assertCountedOnce_andUnderTheBudget(ledger, got);
  }

  @RepeatedTest(3)
  void sixteenInstancesRacingForTheLastDollars_neverOvershoot() throws Exception {
    Ledger ledger = ledger();
    spendAllButTheLastDollars(ledger);
    List<Reservation> got = race(thread -> budget(ledger));
    assertTrue(granted(got) <= 2, granted(got) + " granted");
    assertCountedOnce_andUnderTheBudget(ledger, got);
  }

  @Test
  void whenEveryInstanceReadsThenReservesThenReadsInLockstep_allStepBack_andTheCapHolds() throws Exception {
    Ledger ledger = ledger();
    spendAllButTheLastDollars(ledger);
    CountDownLatch allReadBefore = new CountDownLatch(THREADS);
    CountDownLatch allReserved = new CountDownLatch(THREADS);
    CountDownLatch allReadAfter = new CountDownLatch(THREADS);
    // The worst interleaving there is: every increment waits for all sixteen first reads, every second read for all
    // sixteen increments, every step back for all sixteen second reads.
    List<Reservation> got = race(thread -> budget(new ForwardingLedger(ledger) {
      private int reads;

      @Override
      public Map<String, Long> sum(String collection, List<String> ids, String field, Object value,
          List<String> fields) {
        if (++reads == 2) {
          await(allReserved);
        }
        Map<String, Long> found = super.sum(collection, ids, field, value, fields);
        (reads == 1 ? allReadBefore : allReadAfter).countDown();
        return found;
      }

      @Override
      public void commit(SideWrites writes) {
        boolean increment = allReserved.getCount() > 0;
        await(increment ? allReadBefore : allReadAfter);
        super.commit(writes);
        if (increment) {
          allReserved.countDown();
        }
      }
    }));
    assertEquals(0, granted(got), "each saw all sixteen: all stepped back");
    assertCountedOnce_andUnderTheBudget(ledger, got);
    budget(ledger).reserve(IdempotencyKey.of("gcs:inbox/later.pdf#1"), ESTIMATE, reason -> SideWrites.NONE);
    assertEquals(SPENT_BEFORE + ESTIMATE, today(ledger).totalMicroUsd(), "deferred, not lost: a later try passes");
  }

  private static void await(CountDownLatch latch) {
    try {
      if (!latch.await(60, TimeUnit.SECONDS)) {
        throw new IllegalStateException("the lockstep never completed");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
