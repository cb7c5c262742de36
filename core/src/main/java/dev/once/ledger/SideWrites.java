package dev.once.ledger;

import java.util.List;

/**
 * Writes of an effect whose target is the ledger's own store (an analysis, a billing entry). The ledger adds them to
 * the commit that finishes the claim, so the effect and its completion land together or not at all.
 */
@FunctionalInterface
public interface SideWrites {
  SideWrites NONE = writes -> {};

  /** Adds the writes to the commit being built. */
  void addTo(DocumentWrites writes);

  /** These writes, then {@code more}, in one commit. */
  default SideWrites and(SideWrites more) {
    return writes -> {
      addTo(writes);
      more.addTo(writes);
    };
  }

  static SideWrites all(List<SideWrites> parts) {
    List<SideWrites> copy = List.copyOf(parts);
    return writes -> copy.forEach(part -> part.addTo(writes));
  }
}
