package dev.once.local.eventarc;

import java.time.Duration;

/**
 * How the relay retries a delivery the function did not accept: exponential backoff from {@code initialBackoff},
 * capped at {@code maxBackoff}, until {@code maxAttempts} or {@code maxAge} since the first attempt; then it gives
 * up (logged and counted).
 */
public record RetryPolicy(int maxAttempts, Duration maxAge, Duration initialBackoff, Duration maxBackoff,
    double multiplier) {

  public RetryPolicy {
    if (maxAttempts < 1 || multiplier < 1 || initialBackoff.isNegative() || maxBackoff.compareTo(initialBackoff) < 0
        || maxAge.isNegative()) {
      throw new IllegalArgumentException("retry policy needs maxAttempts >= 1, multiplier >= 1 and"
          + " 0 <= initialBackoff <= maxBackoff, got " + maxAttempts + ", " + multiplier + ", " + initialBackoff
          + ", " + maxBackoff);
    }
  }

  /** Local defaults: quick first retries (a local function restarts in seconds), ten attempts, ten minutes. */
  public static RetryPolicy defaults() {
    return new RetryPolicy(10, Duration.ofMinutes(10), Duration.ofMillis(200), Duration.ofSeconds(30), 2.0);
  }

  public RetryPolicy withMaxAttempts(int attempts) {
    return new RetryPolicy(attempts, maxAge, initialBackoff, maxBackoff, multiplier);
  }

  public RetryPolicy withBackoff(Duration initial, Duration max) {
    return new RetryPolicy(maxAttempts, maxAge, initial, max, multiplier);
  }

  public RetryPolicy withMaxAge(Duration age) {
    return new RetryPolicy(maxAttempts, age, initialBackoff, maxBackoff, multiplier);
  }

  /** The pause after failed attempt number {@code attempt} (1-based). */
  public Duration backoffAfter(int attempt) {
    double millis = initialBackoff.toMillis() * Math.pow(multiplier, attempt - 1);
    return Duration.ofMillis((long) Math.min(millis, maxBackoff.toMillis()));
  }
}
