package dev.once.budget;

import dev.once.guard.Refusal;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.Ledger;
import dev.once.ledger.SideWrites;
import dev.once.observe.Log;
import java.time.LocalDate;
import java.time.ZoneId;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;

/**
 * A cap on what paid calls may cost in one day, the day judged by the store's clock in {@code zone}, that no storm can
 * overrun: what the calls of a day cost never exceeds its budget (their estimates being upper bounds).
 *
 * <p>A reservation reads the day's counters (one call); when spent + reserved + its estimate fit, it adds its estimate
 * to its key's counter (one commit, an atomic increment) and reads the day again: a total now over the budget means
 * other reservations landed meanwhile, and it steps back (takes its estimate off again) and is deferred. Of any
 * reservations that keep their estimate, the last to read saw every other's, so together they fit. The price is on
 * the safe side: reservations of several instances at the very same moment, at the budget's edge, may all step back
 * — deferred, and resumed later. Near the edge, increment and second read take turns within one instance (a lock
 * held for those two calls), so reservations of one instance do not step back for each other. A call already over the
 * budget on the first read is refused without a write or a wait. Nothing is one transaction: that would serialise every call on the
 * day's counters. While the day is less than half used (by the spend this instance last read, this call's estimate
 * included), a reservation skips the first read and the turns: the read could only say yes, and the second read still
 * decides; so a call costs one increment and one read of the day, and two reads nearer the edge. The increment and
 * the step-back are each committed with a marker document of their own ({@link SpendCounters#commitOnce}): the store's
 * client resends a commit whose answer was lost, and an increment applied twice would hold, or give back, an
 * estimate twice. Settling and releasing ride on the ledger's fenced commits, which a resend cannot apply twice.
 *
 * <p>Each reservation, granted or not, logs one line to {@code log} (message {@code logMessage}, no outcome label) with the day, the
 * cap, what was spent and reserved, its estimate and {@code budgetShare} = (spent + reserved, its own estimate
 * included) / cap: what alerts at 80 % and 100 % read.
 */
public final class DailyBudget implements Budget {
  private final SpendCounters counters;
  private final long limitMicroUsd;
  private final ZoneId zone;
  private final Log log;
  private final String logMessage;
  private final ReentrantLock turns = new ReentrantLock(true);
  /** The day's spend as this instance last read it. */
  private volatile DaySpend lastSeen;

  public DailyBudget(Ledger ledger, long limitMicroUsd, ZoneId zone, Log log, String logMessage) {
    if (limitMicroUsd <= 0) {
      throw new IllegalArgumentException("a budget is positive, got " + limitMicroUsd + " µUSD");
    }
    this.counters = new SpendCounters(ledger);
    this.limitMicroUsd = limitMicroUsd;
    this.zone = zone;
    this.log = log;
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
      throws Refusal {
    if (microUsd < 0) {
      throw new IllegalArgumentException("an estimate is not negative, got " + microUsd);
    }
    LocalDate today = counters.today(zone);
    DaySpend seen = lastSeen;
    // Far from the edge the first read could only say yes, and turns could only keep two calls that both fit apart.
    boolean farFromTheEdge = farFromTheEdge(seen, today, microUsd);
    DaySpend before = farFromTheEdge ? seen : read(today);
    if (before.totalMicroUsd() + microUsd > limitMicroUsd) {
      log(key, before, microUsd, before.totalMicroUsd() + microUsd, false);
      if (!fitsADay(microUsd)) {
        String reason = "this call's estimate of " + usd(microUsd) + " alone is more than a whole day's budget of "
            + usd(limitMicroUsd) + ": it waits for a larger budget";
        throw Refusal.deferred(reason, onDeferral.apply(reason));
      }
      throw deferral(before, " + this call's estimate " + usd(microUsd), onDeferral);
    }
    Reservation reservation = new Reservation(today, SpendCounters.shardOf(key), microUsd);
    // Names this reservation's own commits (its marker documents), so a commit resent after its answer was lost
    // is not counted twice.
    String id = UUID.randomUUID().toString();
    DaySpend after;
    if (!farFromTheEdge) {
      turns.lock();
    }
    try {
      try {
        counters.commitOnce(reservation.reserve(), SpendCounters.marker(today, reservation.shard(), id + "-reserved"),
            today);
      } catch (RuntimeException e) {
        // The increment may have landed: nothing to take back (at worst the counter keeps an estimate never spent).
        throw Refusal.notPerformed("could not reserve " + usd(microUsd) + " of the day's budget: " + e.getMessage(), e);
      }
      try {
        after = read(today);
      } catch (Refusal e) {
        if (!e.is(Refusal.Kind.NOT_PERFORMED)) {
          throw e;
        }
        stepBack(reservation, id);
        throw e;
      }
      if (after.totalMicroUsd() > limitMicroUsd) {
        stepBack(reservation, id);
      }
    } finally {
      if (!farFromTheEdge) {
        turns.unlock();
      }
    }
    log(key, before, microUsd, after.totalMicroUsd(), after.totalMicroUsd() <= limitMicroUsd);
    if (after.totalMicroUsd() > limitMicroUsd) {
      throw deferral(after, " (this call's estimate of " + usd(microUsd) + " included: others reserved at the same"
          + " moment)", onDeferral);
    }
    return reservation;
  }

  @Override
  public boolean farFromTheEdge(long microUsd) {
    return farFromTheEdge(lastSeen, counters.today(zone), microUsd);
  }

  private boolean farFromTheEdge(DaySpend seen, LocalDate today, long microUsd) {
    return seen != null && seen.day().equals(today) && 2 * (seen.totalMicroUsd() + microUsd) <= limitMicroUsd;
  }

  @Override
  public boolean fitsADay(long microUsd) {
    return microUsd <= limitMicroUsd;
  }

  @Override
  public boolean exhausted() {
    return today().totalMicroUsd() >= limitMicroUsd;
  }

  /** Today's spend (one read). */
  public DaySpend today() {
    DaySpend spend = counters.read(counters.today(zone));
    lastSeen = spend;
    return spend;
  }

  /** The day's spend, remembered as the last this instance saw. Not readable: the call is not made. */
  private DaySpend read(LocalDate day) {
    try {
      DaySpend spend = counters.read(day);
      lastSeen = spend;
      return spend;
    } catch (RuntimeException e) {
      throw Refusal.notPerformed("could not read the day's spend: " + e.getMessage(), e);
    }
  }

  /** Takes the estimate off again; if that fails, it stays (the counter is high, never low), and the call is not made. */
  private void stepBack(Reservation reservation, String id) {
    try {
      counters.commitOnce(reservation.release(),
          SpendCounters.marker(reservation.day(), reservation.shard(), id + "-stepped-back"), reservation.day());
    } catch (RuntimeException e) {
      throw Refusal.notPerformed("could not take back " + usd(reservation.microUsd()) + " of the day's budget: "
          + e.getMessage(), e);
    }
  }

  private Refusal deferral(DaySpend spend, String estimate, Function<String, SideWrites> onDeferral) {
    String reason = "over the budget of " + spend.day() + " (" + zone.getId() + "): spent " + usd(spend.spentMicroUsd())
        + " + reserved " + usd(spend.reservedMicroUsd()) + estimate + " > " + usd(limitMicroUsd);
    return Refusal.deferred(reason, onDeferral.apply(reason));
  }

  private void log(IdempotencyKey key, DaySpend before, long microUsd, long totalMicroUsd, boolean granted) {
    Map<String, Object> fields = new LinkedHashMap<>();
    fields.put("keyHash", key.logHash());
    fields.put("day", before.day().toString());
    fields.put("budgetMicroUsd", limitMicroUsd);
    fields.put("spentMicroUsd", before.spentMicroUsd());
    fields.put("reservedMicroUsd", before.reservedMicroUsd());
    fields.put("reservationMicroUsd", microUsd);
    fields.put("budgetShare", share(totalMicroUsd));
    fields.put("granted", granted);
    log.write(granted ? "INFO" : "WARNING", logMessage, fields);
  }

  /** To four decimals, rounded down: the alerts compare it with 0.8 and 1.0, which must not be reached early. */
  private double share(long microUsd) {
    return Math.floor(microUsd * 10_000.0 / limitMicroUsd) / 10_000.0;
  }

  static String usd(long microUsd) {
    return String.format(Locale.ROOT, "%.6f USD", microUsd / 1_000_000.0);
  }
}
