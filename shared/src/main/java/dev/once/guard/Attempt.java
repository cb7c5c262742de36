package dev.once.guard;

import dev.once.key.IdempotencyKey;

/** The delivery that holds the claim: which try this is, and its fencing token. */
public record Attempt(IdempotencyKey key, String effect, int number, long token) {}
