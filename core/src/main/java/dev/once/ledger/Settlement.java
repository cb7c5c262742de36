package dev.once.ledger;

import dev.once.key.IdempotencyKey;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A record to create already done, with its outcome, in the commit of another key's claim
 * ({@link Ledger#claimAndSettle}): what {@link Ledger#settle} writes, one commit fewer.
 */
public record Settlement(IdempotencyKey key, String effect, Map<String, Object> outcome) {
  public Settlement {
    if (key == null || effect == null || outcome == null) {
      throw new IllegalArgumentException("a settlement needs a key, an effect and an outcome");
    }
    outcome = Collections.unmodifiableMap(new LinkedHashMap<>(outcome)); // a null value is a value
  }
}
