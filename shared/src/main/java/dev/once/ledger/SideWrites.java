package dev.once.ledger;

import com.google.cloud.firestore.UpdateBuilder;

/**
 * Writes of an effect whose target is Firestore itself (an analysis, a billing entry). The ledger adds them to
 * the commit that finishes the claim, so the effect and its completion land together or not at all.
 */
@FunctionalInterface
public interface SideWrites {
  SideWrites NONE = writes -> {};

  /** Adds the writes to {@code writes}, a write batch or a transaction. */
  void addTo(UpdateBuilder<?> writes);
}
