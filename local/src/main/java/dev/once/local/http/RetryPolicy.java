package dev.once.local.http;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

/**
 * How a sender retries a request the other side did not accept (the relay's deliveries, the Gemini stand-in's
 * webhooks, the storage stand-in's notifications, the storm's direct sends): exponential backoff from
 * {@code initialBackoff}, capped at {@code maxBackoff}, until {@code maxAttempts} or {@code maxAge} since the
 * first attempt; then the sender gives up (and says so).
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

  /**
   * The pause before the next attempt, after failed attempt number {@code attempt} of a request first sent at
   * {@code first}; empty when the policy gives up (the attempts are used up, or the next one would start after
   * {@code maxAge}).
   */
  public Optional<Duration> nextPause(int attempt, Instant first) {
    Duration pause = backoffAfter(attempt);
    boolean tooOld = Duration.between(first, Instant.now()).plus(pause).compareTo(maxAge) > 0;
    return attempt >= maxAttempts || tooOld ? Optional.empty() : Optional.of(pause);
  }
}
