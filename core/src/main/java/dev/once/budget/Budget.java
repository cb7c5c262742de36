package dev.once.budget;

import dev.once.guard.Refusal;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.SideWrites;
import java.util.function.Function;

/**
 * What a paid effect asks before it spends: may this much be set aside for it today? {@link DailyBudget} caps the
 * day's spend; {@link #NONE} caps nothing and costs nothing (no read, no write).
 */
public interface Budget {
  /** No cap: every call passes, nothing is read or written. */
  Budget NONE = new Budget() {
    @Override
    public boolean capped() {
      return false;
    }

    @Override
    public Reservation reserve(IdempotencyKey key, long microUsd, Function<String, SideWrites> onDeferral) {
      return Reservation.NONE;
    }

    @Override
    public boolean exhausted() {
      return false;
    }

    @Override
    public boolean farFromTheEdge(long microUsd) {
      return true;
    }

    @Override
    public boolean fitsADay(long microUsd) {
      return true;
    }
  };

  /** Whether calls are counted at all: when not, a caller need not even estimate them. */
  boolean capped();

  /**
   * Sets {@code microUsd} aside for the call {@code key} is about to make, or throws {@link Refusal#deferred} with
   * {@code onDeferral}'s writes (given the reason) when the budget cannot take it. A failure to read or write the
   * counters is {@link Refusal#notPerformed}: nothing was spent.
   */
  Reservation reserve(IdempotencyKey key, long microUsd, Function<String, SideWrites> onDeferral) throws Refusal;

  /**
   * Whether, by what this instance last read (no read now), a reservation of {@code microUsd} would leave the day
   * less than half used: where a loose estimate costs nothing but the room it holds until settled.
   */
  boolean farFromTheEdge(long microUsd);

  /**
   * Whether a call of {@code microUsd} fits in a whole day's budget at all (no read): one that does not waits for a
   * larger budget, not for the next day, and must not hold back smaller work deferred after it.
   */
  boolean fitsADay(long microUsd);

  /** Nothing more fits today, whatever its size (one read): what a poller asks before resuming deferred work. */
  boolean exhausted();
}
