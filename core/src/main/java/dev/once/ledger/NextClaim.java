package dev.once.ledger;

/**
 * The effect that always follows the one being completed, claimed for the same key in the completing commit: one
 * commit fewer than claiming it afterwards, and no gap in which a crash leaves the first done and the next unclaimed.
 */
public record NextClaim(String effect, ClaimOptions options) {
  public static NextClaim of(String effect) {
    return new NextClaim(effect, ClaimOptions.DEFAULTS);
  }
}
