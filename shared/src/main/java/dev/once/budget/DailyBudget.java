package dev.once.budget;

import dev.once.guard.Deferral;
import dev.once.guard.NotPerformed;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.Ledger;
import dev.once.ledger.SideWrites;
import dev.once.observe.Log;
import java.time.ZoneId;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

/**
 * A cap on what paid calls may cost in one day, the day judged by the store's clock in {@code zone}. A reservation
 * reads the day's counters (one call) and, when spent + reserved + its estimate fit under the cap, adds its estimate
 * to its key's counter (one commit, an atomic increment). The read and the increment are not one transaction — that
 * would serialise every call on the day's counters — so reservations whose read and increment overlap may all pass
 * on the same reading: the day's spent + reserved can exceed the cap by at most (C − 1) × the largest estimate, C
 * being the number of reservations made at the same moment (at most the calls handled at once). Estimates are upper
 * bounds and settle down to actual costs, so what is finally spent stays under the same bound.
 *
 * <p>Each reservation, granted or not, logs one line (message {@code logMessage}, no outcome label) with the day,
 * the cap, what was spent and reserved before it, its estimate and {@code budgetShare} = (spent + reserved +
 * estimate) / cap: what alerts at 80 % and 100 % read.
 */
public final class DailyBudget implements Budget {
  private final SpendCounters counters;
  private final long limitMicroUsd;
  private final ZoneId zone;
  private final String logMessage;

  public DailyBudget(Ledger ledger, long limitMicroUsd, ZoneId zone, String logMessage) {
    if (limitMicroUsd <= 0) {
      throw new IllegalArgumentException("a budget is positive, got " + limitMicroUsd + " µUSD");
    }
    this.counters = new SpendCounters(ledger);
    this.limitMicroUsd = limitMicroUsd;
    this.zone = zone;
    this.logMessage = logMessage;
  }

  public long limitMicroUsd() {
    return limitMicroUsd;
  }

  public ZoneId zone() {
    return zone;
  }

  @Override
  public boolean capped() {
    return true;
  }

  @Override
  public Reservation reserve(IdempotencyKey key, long microUsd, Function<String, SideWrites> onDeferral)
      throws Deferral {
    if (microUsd < 0) {
      throw new IllegalArgumentException("an estimate is not negative, got " + microUsd);
    }
    DaySpend spend;
    try {
      spend = counters.read(counters.today(zone));
    } catch (RuntimeException e) {
      throw new NotPerformed("could not read the day's spend: " + e.getMessage(), e);
    }
    boolean granted = spend.totalMicroUsd() + microUsd <= limitMicroUsd;
    log(key, spend, microUsd, granted);
    if (!granted) {
      String reason = "over the budget of " + spend.day() + " (" + zone.getId() + "): spent " + usd(spend.spentMicroUsd())
          + " + reserved " + usd(spend.reservedMicroUsd()) + " + this call's estimate " + usd(microUsd) + " > "
          + usd(limitMicroUsd);
      throw new Deferral(reason, onDeferral.apply(reason));
    }
    Reservation reservation = new Reservation(spend.day(), SpendCounters.shardOf(key), microUsd);
    try {
      counters.commit(reservation.reserve());
    } catch (RuntimeException e) {
      // The increment may have landed: nothing to take back (at worst the counter keeps an estimate never spent).
      throw new NotPerformed("could not reserve " + usd(microUsd) + " of the day's budget: " + e.getMessage(), e);
    }
    return reservation;
  }

  @Override
  public boolean exhausted() {
    return counters.read(counters.today(zone)).totalMicroUsd() >= limitMicroUsd;
  }

  /** Today's spend (one read). */
  public DaySpend today() {
    return counters.read(counters.today(zone));
  }

  private void log(IdempotencyKey key, DaySpend spend, long microUsd, boolean granted) {
    Map<String, Object> fields = new LinkedHashMap<>();
    fields.put("key", key.value());
    fields.put("day", spend.day().toString());
    fields.put("budgetMicroUsd", limitMicroUsd);
    fields.put("spentMicroUsd", spend.spentMicroUsd());
    fields.put("reservedMicroUsd", spend.reservedMicroUsd());
    fields.put("reservationMicroUsd", microUsd);
    fields.put("budgetShare", share(spend.totalMicroUsd() + microUsd));
    fields.put("granted", granted);
    Log.write(granted ? "INFO" : "WARNING", logMessage, fields);
  }

  /** To four decimals, rounded down: the alerts compare it with 0.8 and 1.0, which must not be reached early. */
  private double share(long microUsd) {
    return Math.floor(microUsd * 10_000.0 / limitMicroUsd) / 10_000.0;
  }

  static String usd(long microUsd) {
    return String.format(Locale.ROOT, "%.6f USD", microUsd / 1_000_000.0);
  }
}
