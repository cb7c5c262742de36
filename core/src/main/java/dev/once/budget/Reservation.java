package dev.once.budget;

import dev.once.ledger.SideWrites;
import java.time.LocalDate;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * An estimate set aside against one day's budget before a paid call, on one of the day's counters. The commit that
 * records the call's result settles it ({@link #settle}: the estimate comes off, the actual cost goes on, on the
 * reservation's own day and counter whenever the result arrives); a try refused before any work releases it
 * ({@link #release}) in the commit that releases the try. A try that may have been billed but never answered keeps
 * it: the money may be spent.
 *
 * @param day the budget day the estimate counts against; null for {@link #NONE}
 * @param shard which of the day's counters holds it
 */
public record Reservation(LocalDate day, int shard, long microUsd) {
  /** Nothing reserved (no budget): settling and releasing write nothing. */
  public static final Reservation NONE = new Reservation(null, 0, 0);

  public boolean none() {
    return day == null;
  }

  /** The writes that replace the estimate with what the call cost; nothing for {@link #NONE}. */
  public SideWrites settle(long actualMicroUsd) {
    return none() ? SideWrites.NONE : SpendCounters.add(day, shard, -microUsd, actualMicroUsd);
  }

  /** The writes that take the estimate back (nothing was carried out); nothing for {@link #NONE}. */
  public SideWrites release() {
    return none() ? SideWrites.NONE : SpendCounters.add(day, shard, -microUsd, 0);
  }

  /** The writes that set the estimate aside. */
  public SideWrites reserve() {
    return SpendCounters.add(day, shard, microUsd, 0);
  }

  /** As a record stores it beside the work it is for (a batch job's analysis, settled by the job's completion). */
  public Map<String, Object> toMap() {
    if (none()) {
      return null;
    }
    Map<String, Object> fields = new LinkedHashMap<>();
    fields.put("day", day.toString());
    fields.put("shard", (long) shard);
    fields.put("microUsd", microUsd);
    return fields;
  }

  /** What {@link #toMap} stored; {@link #NONE} when nothing (or nothing readable) was. */
  public static Reservation fromMap(Object stored) {
    if (!(stored instanceof Map<?, ?> map) || !(map.get("day") instanceof String day)
        || !(map.get("shard") instanceof Number shard) || !(map.get("microUsd") instanceof Number microUsd)) {
      return NONE;
    }
    try {
      return new Reservation(LocalDate.parse(day), shard.intValue(), microUsd.longValue());
    } catch (DateTimeParseException e) {
      return NONE;
    }
  }
}
