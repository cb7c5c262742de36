package dev.once.internal.ledger;

import dev.once.ledger.Claim;
import dev.once.ledger.LeaseLost;
import dev.once.ledger.RecordFields;
import dev.once.ledger.RecordState;
import dev.once.ledger.SideWrites;
import dev.once.ledger.spi.RecordStore;
import dev.once.ledger.spi.RecordStore.Decision;
import dev.once.ledger.spi.RecordStore.RecordWrite;
import dev.once.ledger.spi.RecordStore.Refused;
import dev.once.ledger.spi.RecordStore.Snapshot;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * How a holder's writes are fenced, and how a write whose answer was lost recognises that it was applied. A holder
 * that created the record writes with an update-time precondition (one write, no read); a holder that took over
 * checks its token in a transaction. A stale holder gets {@link LeaseLost} and changes nothing. Every write carries
 * a fresh nonce: a write that finds the record already bearing its own nonce knows it was applied.
 */
final class Fencing {
  private final RecordStore store;

  Fencing(RecordStore store) {
    this.store = store;
  }

  /** The update times a fenced commit reported (null after a transaction, which reports none). */
  record Fenced(Instant recordWrittenAt, Instant nextWrittenAt) {}

  /**
   * Writes {@code fields}, {@code writes} and {@code create} in one commit, only while {@code claim}'s holder holds
   * it: by the claim's update time (one write) when it has one, else by its token in a transaction. A failed update
   * time is not proof of a lost claim: this holder's own earlier write may have moved it (a renewal applied whose
   * answer was lost), or this very write may have (resent by the client after its answer was lost), so the token
   * transaction decides then, and recognises this write by its nonce. Tokens move on with every takeover and every
   * operator's release.
   */
  Fenced fence(Claim claim, Map<String, Object> fields, SideWrites writes, RecordWrite create, String action) {
    if (claim.writtenAt() != null) {
      List<RecordWrite> records = new ArrayList<>();
      records.add(RecordWrite.update(claim.recordId(), fields, claim.writtenAt()));
      if (create != null) {
        records.add(create);
      }
      try {
        List<Instant> times = store.commit(records, writes);
        return new Fenced(times.get(0), create == null ? null : times.get(1));
      } catch (Refused e) {
        // A record or document the commit creates exists: not a matter of the claim.
        if (e.why() == Refused.Why.EXISTS) {
          throw e;
        }
      }
    }
    if (!heldByToken(claim.recordId(), claim.token(), snapshot -> true, fields, writes, create)) {
      throw new LeaseLost("cannot " + action + " " + claim.effect() + " for " + claim.key() + ": token "
          + claim.token() + " no longer holds the claim (taken over after its lease expired, or finished)");
    }
    return new Fenced(null, null);
  }

  /**
   * In a transaction: when the record is still claimed with {@code token} and {@code also} holds of it, writes
   * {@code fields}, {@code create} and {@code writes}. Whether it wrote.
   */
  boolean heldByToken(String id, long token, Predicate<Snapshot> also, Map<String, Object> fields, SideWrites writes,
      RecordWrite create) {
    try {
      return store.transact(id, snapshot -> {
        if (RecordLayout.bears(snapshot, (String) fields.get(RecordFields.NONCE))) {
          // This write was applied already: the one-write commit, or this transaction's own, lost its answer and was
          // resent (refused by its precondition) or is being run again.
          return Decision.answer(true);
        }
        if (!snapshot.exists()
            || !RecordState.CLAIMED.name().equals(snapshot.fields().get(RecordFields.STATE))
            || !Objects.equals(RecordLayout.number(snapshot.fields().get(RecordFields.TOKEN)), token)
            || !also.test(snapshot)) {
          return Decision.answer(false);
        }
        List<RecordWrite> records = new ArrayList<>();
        records.add(RecordWrite.update(id, fields, null));
        if (create != null) {
          records.add(create);
        }
        return Decision.write(true, records, writes);
      });
    } catch (RuntimeException e) {
      // As for a takeover: a commit applied whose answer was lost comes back as a closed transaction.
      if (e instanceof LeaseLost || !appliedAlready(id, fields, e)) {
        throw e;
      }
      return true;
    }
  }

  /** Whether the record bears the nonce of {@code fields}: the write was applied (its answer lost). */
  boolean appliedAlready(String recordId, Map<String, Object> fields, RuntimeException failure) {
    return bearing(recordId, (String) fields.get(RecordFields.NONCE), failure).isPresent();
  }

  /**
   * The record, read after a write to it failed with {@code failure}, when it bears {@code nonce}: the write was
   * applied and its answer lost. When the read fails too, {@code failure} is thrown.
   */
  Optional<Snapshot> bearing(String id, String nonce, RuntimeException failure) {
    Snapshot snapshot = readAfter(id, failure, false);
    return RecordLayout.bears(snapshot, nonce) ? Optional.of(snapshot) : Optional.empty();
  }

  /**
   * The record after a write to it failed with {@code failure}. When the failure says nothing of the record (not
   * {@code expected}) and the read fails too, the write's own failure is what the caller sees.
   */
  Snapshot readAfter(String id, RuntimeException failure, boolean expected) {
    try {
      return store.read(id);
    } catch (RuntimeException unreadable) {
      if (expected) {
        throw unreadable;
      }
      RuntimeException original = Refused.original(failure);
      original.addSuppressed(unreadable);
      throw original;
    }
  }

  /** Runs {@code step}, letting a caller see what the store threw, never the machine's reading of it. */
  static <T> T surfaced(Supplier<T> step) {
    try {
      return step.get();
    } catch (Refused e) {
      throw Refused.original(e);
    }
  }
}
