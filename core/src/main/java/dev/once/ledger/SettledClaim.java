package dev.once.ledger;

/**
 * What {@link Ledger#claimAndSettle} did: the claim's result, and whether its commit also created the settlement's
 * record (true only with a first {@link ClaimResult.Acquired}; false when that record existed, or the claim's own
 * record did, and nothing was settled: settle it then, if it is still needed).
 */
public record SettledClaim(ClaimResult claim, boolean settled) {}
