package dev.once.budget;

import java.time.LocalDate;

/**
 * One day's spend as its counters hold it, in millionths of a US dollar.
 *
 * @param spentMicroUsd what settled calls cost (their actual cost)
 * @param reservedMicroUsd estimates not settled: calls running now, and calls that may have been billed but never
 *     answered (a timeout, a crash), whose estimate stays as what they may have cost
 */
public record DaySpend(LocalDate day, long spentMicroUsd, long reservedMicroUsd) {
  /** What counts against the budget: spent and reserved. */
  public long totalMicroUsd() {
    return spentMicroUsd + reservedMicroUsd;
  }
}
