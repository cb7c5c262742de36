package dev.once.ledger;

import dev.once.key.IdempotencyKey;
import java.time.Instant;

/**
 * The right, held by one delivery, to run one effect for one key until {@code leaseExpiresAt}.
 *
 * @param token the fencing counter: a takeover increments it, so a stale holder can be told apart
 * @param attempts how many deliveries have held this claim, this one included
 * @param writtenAt the store's update time of the claim as this holder wrote it; completion is conditional on it
 *     (one write, no read). Null after a takeover, whose transaction does not report its commit time: completion
 *     then checks {@code token} inside a transaction instead.
 */
public record Claim(
    IdempotencyKey key,
    String effect,
    String recordId,
    long token,
    int attempts,
    Instant leaseExpiresAt,
    Instant writtenAt) {}
