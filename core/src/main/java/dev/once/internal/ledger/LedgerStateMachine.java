package dev.once.internal.ledger;

import static dev.once.internal.ledger.Fencing.surfaced;
import static dev.once.internal.ledger.RecordLayout.MAX_CALL_ERROR_CHARS;
import static dev.once.internal.ledger.RecordLayout.MAX_ERROR_CHARS;
import static dev.once.internal.ledger.RecordLayout.truncate;

import dev.once.internal.ledger.Fencing.Fenced;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.Call;
import dev.once.ledger.Claim;
import dev.once.ledger.ClaimOptions;
import dev.once.ledger.ClaimResult;
import dev.once.ledger.ClaimResult.Acquired;
import dev.once.ledger.DocumentWrites;
import dev.once.ledger.LeaseLost;
import dev.once.ledger.Ledger;
import dev.once.ledger.LedgerOptions;
import dev.once.ledger.LedgerRecord;
import dev.once.ledger.LedgerUnavailable;
import dev.once.ledger.NextClaim;
import dev.once.ledger.RecordFields;
import dev.once.ledger.RecordState;
import dev.once.ledger.SettledClaim;
import dev.once.ledger.Settlement;
import dev.once.ledger.SideWrites;
import dev.once.ledger.spi.RecordStore;
import dev.once.ledger.spi.RecordStore.Decision;
import dev.once.ledger.spi.RecordStore.RecordWrite;
import dev.once.ledger.spi.RecordStore.Refused;
import dev.once.ledger.spi.RecordStore.Snapshot;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * The ledger's rules, written once over a {@link RecordStore}: every ledger is this machine over its store. The
 * rules, in one place (the layout is {@link RecordLayout}'s, the fencing {@link Fencing}'s):
 *
 * <ul>
 *   <li><b>Claim</b> is one create (precondition: the record does not exist), no transaction. When the record exists
 *       it is read once: {@code DONE} → duplicate, {@code REJECTED} → rejected, {@code CLAIMED} with a live lease →
 *       busy, {@code CLAIMED} with an expired lease → takeover. A record whose fingerprint differs from the offered
 *       one is a conflict, whatever its state.
 *   <li><b>Claim and settle</b> is the same create and a settled record's create in one commit; when that commit
 *       finds a record existing, the claim's record is read once: present, it is judged as above (nothing settled);
 *       absent, the settlement's record was there, and the claim is made alone.
 *   <li><b>Takeover</b> runs in a transaction that re-reads the record and increments {@code token} and
 *       {@code attempts}; the new lease starts at the transaction's read time.
 *   <li><b>Fencing</b>: complete, reject, renew and release succeed only for the current holder.
 *   <li><b>Server time</b>: a lease is live when its {@code leaseExpiresAt} is after the store's read time; the
 *       instance clock only contributes through the store's estimate of its time ({@link RecordStore#time}).
 *   <li><b>Release</b> keeps the record {@code CLAIMED} with {@code leaseExpiresAt} set to the release's own commit
 *       time, so the next delivery takes over at once, with {@code attempts} and the last {@code error}.
 *   <li><b>Invalidation</b> (an operator's deliberate re-run) moves a finished record to its next {@code generation}:
 *       how the run ended goes to its {@code history} with who, when and why, and the record becomes a claim with no
 *       try whose lease is over, so the next delivery takes it over as after a release and runs the effect once more.
 *   <li><b>Retention</b>: {@code expireAt} (the TTL field) is the last write's time plus the retention period.
 *   <li><b>Resent writes</b>: a store's client may resend a commit whose answer was lost, and run a transaction's body
 *       again when its commit failed. Every write of a record carries a fresh {@code nonce}, so a write that finds
 *       the record already bearing its own nonce knows it was applied: a resent claim is its creator's own, not
 *       another holder's; a resent takeover, completion, rejection, renewal or release is done, not lost.
 * </ul>
 */
public final class LedgerStateMachine implements Ledger {
  private static final int CREATE_ROUNDS = 3;
  /** A record id no record has (records are 64 hex digits): read only for its read time. */
  private static final String CLOCK_PROBE = "clock";
  /** The most documents one sum names by id: a store that reads them by id reads them in one call. */
  private static final int MAX_SUMMED = 30;

  private final RecordStore store;
  private final LedgerOptions options;
  private final Fencing fencing;

  public LedgerStateMachine(RecordStore store, LedgerOptions options) {
    this.store = store;
    this.options = options;
    this.fencing = new Fencing(store);
  }

  @Override
  public Optional<LedgerRecord> lookup(IdempotencyKey key, String effect) {
    Snapshot snapshot = store.read(RecordLayout.recordId(key, effect));
    return snapshot.exists() ? Optional.of(RecordLayout.record(snapshot)) : Optional.empty();
  }

  @Override
  public ClaimResult claim(IdempotencyKey key, String effect, ClaimOptions claimOptions) {
    return surfaced(() -> claimOrJudge(key, effect, claimOptions, null).claim());
  }

  @Override
  public SettledClaim claimAndSettle(IdempotencyKey key, String effect, ClaimOptions claimOptions,
      Settlement alongside) {
    return surfaced(() -> claimOrJudge(key, effect, claimOptions, alongside));
  }

  /** The claim, with {@code alongside} (or null) created done in its commit while neither record exists. */
  private SettledClaim claimOrJudge(IdempotencyKey key, String effect, ClaimOptions claimOptions,
      Settlement alongside) {
    String id = RecordLayout.recordId(key, effect);
    if (store.time().isEmpty()) {
      // A new instance has seen no store time yet: a read gives one, and answers at once if the record exists.
      Snapshot existing = store.read(id);
      if (existing.exists()) {
        return new SettledClaim(judge(id, RecordLayout.record(existing), claimOptions), false);
      }
    }
    Settlement settling = alongside;
    for (int round = 0; round < CREATE_ROUNDS; round++) {
      Instant now = now();
      Duration lease = claimOptions.leaseOr(options.lease());
      String nonce = RecordLayout.nonce();
      List<RecordWrite> records = new ArrayList<>();
      records.add(RecordLayout.newClaim(id, key, effect, claimOptions, now, now.plus(lease),
          now.plus(options.retention()), nonce));
      if (settling != null) {
        records.add(RecordLayout.newSettled(RecordLayout.recordId(settling.key(), settling.effect()), settling.key(),
            settling.effect(), settling.outcome(), now, now.plus(options.retention()), nonce));
      }
      try {
        Instant writtenAt = store.commit(records, SideWrites.NONE).get(0);
        return new SettledClaim(new Acquired(RecordLayout.firstClaim(key, effect, id, now, lease, writtenAt)),
            settling != null);
      } catch (RuntimeException e) {
        // EXISTS may be this very create, resent by the client after its answer was lost; any other failure may have
        // been applied too.
        boolean exists = existed(e);
        Snapshot snapshot = fencing.readAfter(id, e, exists);
        if (RecordLayout.bears(snapshot, nonce)) {
          return new SettledClaim(
              new Acquired(RecordLayout.firstClaim(key, effect, id, now, lease, snapshot.updateTime())),
              settling != null);
        }
        if (snapshot.exists()) {
          return new SettledClaim(judge(id, RecordLayout.record(snapshot), claimOptions), false);
        }
        if (!exists) {
          throw e;
        }
      }
      // The claim's record is absent: the settlement's existed (claim alone now), or the claim's vanished between our
      // create and our read (TTL deletion): create again.
      settling = null;
    }
    throw new LedgerUnavailable("the ledger record " + id + " kept appearing and vanishing", null);
  }

  /** A create refused because a record exists (EXISTS; CONTENDED: a transaction, a takeover, holds it). */
  private static boolean existed(RuntimeException e) {
    return e instanceof Refused refused
        && (refused.why() == Refused.Why.EXISTS || refused.why() == Refused.Why.CONTENDED);
  }

  @Override
  public Optional<ClaimResult> settle(IdempotencyKey key, String effect, Map<String, Object> outcome) {
    return surfaced(() -> settleOrJudge(key, effect, outcome));
  }

  private Optional<ClaimResult> settleOrJudge(IdempotencyKey key, String effect, Map<String, Object> outcome) {
    String id = RecordLayout.recordId(key, effect);
    if (store.time().isEmpty()) {
      Snapshot existing = store.read(id);
      if (existing.exists()) {
        return Optional.of(judge(id, RecordLayout.record(existing), ClaimOptions.DEFAULTS));
      }
    }
    for (int round = 0; round < CREATE_ROUNDS; round++) {
      Instant now = now();
      String nonce = RecordLayout.nonce();
      try {
        store.commit(List.of(RecordLayout.newSettled(id, key, effect, outcome, now, now.plus(options.retention()),
            nonce)), SideWrites.NONE);
        return Optional.empty();
      } catch (RuntimeException e) {
        // As for a claim: EXISTS may be this create resent, any other failure may have been applied.
        boolean exists = existed(e);
        Snapshot snapshot = fencing.readAfter(id, e, exists);
        if (RecordLayout.bears(snapshot, nonce)) {
          return Optional.empty();
        }
        if (snapshot.exists()) {
          return Optional.of(judge(id, RecordLayout.record(snapshot), ClaimOptions.DEFAULTS));
        }
        if (!exists) {
          throw e;
        }
      }
    }
    throw new LedgerUnavailable("the ledger record " + id + " kept appearing and vanishing", null);
  }

  private ClaimResult judge(String id, LedgerRecord record, ClaimOptions claimOptions) {
    ClaimResult settled = ClaimResult.settled(record, claimOptions.fingerprint());
    return settled instanceof ClaimResult.Expired
        ? takeOver(id, IdempotencyKey.of(record.key()), record.effect(), claimOptions)
        : settled;
  }

  private ClaimResult takeOver(String id, IdempotencyKey key, String effect, ClaimOptions claimOptions) {
    // One nonce for every run of the body: a run after a commit whose answer was lost finds it on the record.
    String nonce = RecordLayout.nonce();
    Duration lease = claimOptions.leaseOr(options.lease());
    try {
      return store.transact(id, snapshot -> takeOver(snapshot, key, effect, claimOptions, nonce, lease));
    } catch (RuntimeException e) {
      // Its commit applied, the answer lost and the commit resent: the transaction is closed by then, and the client
      // reports the resend's failure. The record bearing the nonce says it was applied.
      return fencing.bearing(id, nonce, e)
          .map(snapshot -> (ClaimResult) new Acquired(RecordLayout.asWritten(RecordLayout.record(snapshot), key,
              effect, lease)))
          .orElseThrow(() -> e);
    }
  }

  private Decision<ClaimResult> takeOver(Snapshot snapshot, IdempotencyKey key, String effect,
      ClaimOptions claimOptions, String nonce, Duration lease) {
    String id = snapshot.id();
    Instant readTime = snapshot.readTime();
    if (!snapshot.exists()) {
      // Deleted meanwhile (TTL): claim it afresh, inside this transaction.
      return Decision.write(new Acquired(RecordLayout.firstClaim(key, effect, id, readTime, lease, null)),
          List.of(RecordLayout.newClaim(id, key, effect, claimOptions, readTime, readTime.plus(lease),
              readTime.plus(options.retention()), nonce)),
          SideWrites.NONE);
    }
    LedgerRecord record = RecordLayout.record(snapshot);
    if (RecordLayout.bears(snapshot, nonce)) {
      return Decision.answer(new Acquired(RecordLayout.asWritten(record, key, effect, lease)));
    }
    ClaimResult settled = ClaimResult.settled(record, claimOptions.fingerprint());
    if (!(settled instanceof ClaimResult.Expired)) {
      return Decision.answer(settled);
    }
    Takeover takeover = Takeover.of(record, claimOptions, readTime);
    Map<String, Object> fields = new HashMap<>();
    fields.put(RecordFields.TOKEN, takeover.token());
    fields.put(RecordFields.ATTEMPTS, (long) takeover.attempts());
    fields.put(RecordFields.SPENT, (long) takeover.spent());
    fields.put(RecordFields.CALLS, Calls.stored(takeover.calls()));
    fields.put(RecordFields.LEASE_EXPIRES_AT, readTime.plus(lease));
    fields.put(RecordFields.EXPIRE_AT, readTime.plus(options.retention()));
    fields.put(RecordFields.UPDATED_AT, DocumentWrites.serverTime());
    fields.put(RecordFields.NONCE, nonce);
    if (record.fingerprint() == null && claimOptions.fingerprint() != null) {
      fields.put(RecordFields.FINGERPRINT, claimOptions.fingerprint());
    }
    // A takeover is fenced by its token: a transaction does not report its commit time.
    return Decision.write(new Acquired(takeover.claim(key, effect, id, readTime.plus(lease), null, lease)),
        List.of(RecordWrite.update(id, fields, null)), SideWrites.NONE);
  }

  @Override
  public Claim renew(Claim claim, Duration lease) {
    return surfaced(() -> {
      Instant leaseExpiresAt = now().plus(lease);
      Map<String, Object> fields = written();
      fields.put(RecordFields.LEASE_EXPIRES_AT, leaseExpiresAt);
      Fenced written = fencing.fence(claim, fields, SideWrites.NONE, null, "renew");
      return claim.renewed(leaseExpiresAt, written.recordWrittenAt(), lease);
    });
  }

  @Override
  public Optional<Claim> complete(Claim claim, Map<String, Object> outcome, SideWrites writes, NextClaim next) {
    return surfaced(() -> completeAndChain(claim, outcome, writes, next));
  }

  private Optional<Claim> completeAndChain(Claim claim, Map<String, Object> outcome, SideWrites writes,
      NextClaim next) {
    Map<String, Object> fields = finishing(RecordState.DONE);
    fields.put(RecordFields.OUTCOME, outcome == null ? Map.of() : outcome);
    fields.put(RecordFields.CALLS, Calls.stored(claim.callsEnded(Call.Outcome.DONE, null)));
    if (next == null) {
      fencing.fence(claim, fields, writes, null, "complete");
      return Optional.empty();
    }
    String nextId = RecordLayout.recordId(claim.key(), next.effect());
    Instant now = now();
    Duration lease = next.options().leaseOr(options.lease());
    try {
      Fenced written = fencing.fence(claim, fields, writes, RecordLayout.newClaim(nextId, claim.key(), next.effect(),
          next.options(), now, now.plus(lease), now.plus(options.retention()), RecordLayout.nonce()), "complete");
      return Optional.of(RecordLayout.firstClaim(claim.key(), next.effect(), nextId, now, lease,
          written.nextWrittenAt()));
    } catch (Refused e) {
      if (e.why() != Refused.Why.EXISTS) {
        throw e;
      }
      if (fencing.appliedAlready(claim.recordId(), fields, e)) {
        // This commit, resent after its answer was lost, found the next claim it had made itself.
        return Optional.of(RecordLayout.firstClaim(claim.key(), next.effect(), nextId, now, lease, null));
      }
      // An earlier holder got as far as the next effect: complete alone; the next effect is claimed as usual.
      fencing.fence(claim, fields, writes, null, "complete");
      return Optional.empty();
    }
  }

  @Override
  public void reject(Claim claim, String reason, boolean gaveUp, SideWrites writes) {
    surfaced(() -> {
      Map<String, Object> fields = finishing(RecordState.REJECTED);
      fields.put(RecordFields.ERROR, truncate(reason, MAX_ERROR_CHARS));
      if (gaveUp) {
        fields.put(RecordFields.GAVE_UP, true);
      }
      fields.put(RecordFields.CALLS, Calls.stored(claim.callsEnded(Call.Outcome.REJECTED,
          truncate(reason, MAX_CALL_ERROR_CHARS))));
      return fencing.fence(claim, fields, writes, null, "reject");
    });
  }

  @Override
  public void release(Claim claim, String error, boolean mayHaveRun, SideWrites writes) {
    surfaced(() -> {
      Map<String, Object> fields = written();
      // The token moves on: a release resent by the client (its answer lost) finds its nonce and is done, and the
      // token would refuse it regardless; it is never applied twice with its writes (a reservation given back twice).
      fields.put(RecordFields.TOKEN, claim.token() + 1);
      fields.put(RecordFields.LEASE_EXPIRES_AT, DocumentWrites.serverTime());
      fields.put(RecordFields.ERROR, truncate(error, MAX_ERROR_CHARS));
      fields.put(RecordFields.CALLS, Calls.stored(claim.callsEnded(
          mayHaveRun ? Call.Outcome.FAILED : Call.Outcome.NOT_PERFORMED, truncate(error, MAX_CALL_ERROR_CHARS))));
      fields.put(RecordFields.SPENT, (long) (mayHaveRun || claim.exhausted() ? claim.spent() : claim.spent() - 1));
      return fencing.fence(claim, fields, writes, null, "release");
    });
  }

  @Override
  public void forceRelease(IdempotencyKey key, String effect, long token, String by, String reason,
      boolean evenIfLive) {
    Map<String, Object> fields = written();
    fields.put(RecordFields.TOKEN, token + 1);
    fields.put(RecordFields.LEASE_EXPIRES_AT, DocumentWrites.serverTime());
    fields.put(RecordFields.RELEASED_BY, by);
    fields.put(RecordFields.RELEASED_AT, DocumentWrites.serverTime());
    fields.put(RecordFields.RELEASE_REASON, truncate(reason, MAX_ERROR_CHARS));
    Predicate<Snapshot> leaseOver = snapshot -> {
      Instant lease = (Instant) snapshot.fields().get(RecordFields.LEASE_EXPIRES_AT);
      return evenIfLive || lease == null || !lease.isAfter(snapshot.readTime());
    };
    boolean released = surfaced(
        () -> fencing.heldByToken(RecordLayout.recordId(key, effect), token, leaseOver, fields, SideWrites.NONE, null));
    if (!released) {
      throw new LeaseLost("cannot release " + effect + " for " + key + ": token " + token
          + " no longer holds the claim (taken over, or finished)"
          + (evenIfLive ? "" : ", or its lease is live again (renewed since it was read)"));
    }
  }

  @Override
  public boolean invalidate(IdempotencyKey key, String effect, int generation, String by, String reason) {
    String id = RecordLayout.recordId(key, effect);
    // One nonce for every run of the body: a run after a commit whose answer was lost finds it on the record.
    String nonce = RecordLayout.nonce();
    try {
      return store.transact(id, snapshot -> invalidated(snapshot, generation, by, reason, nonce));
    } catch (RuntimeException e) {
      if (fencing.bearing(id, nonce, e).isPresent()) {
        return true;
      }
      throw Refused.original(e);
    }
  }

  /** The record, finished in {@code generation}, as the next generation's claim with no try and its lease over. */
  private Decision<Boolean> invalidated(Snapshot snapshot, int generation, String by, String reason, String nonce) {
    if (RecordLayout.bears(snapshot, nonce)) {
      return Decision.answer(true);
    }
    if (!snapshot.exists()) {
      return Decision.answer(false);
    }
    LedgerRecord record = RecordLayout.record(snapshot);
    boolean finished = record.state() == RecordState.DONE || record.state() == RecordState.REJECTED;
    if (!finished || record.generation() != generation) {
      return Decision.answer(false); // running, waiting for a redelivery, or invalidated since it was read
    }
    LedgerRecord.Invalidated ended = new LedgerRecord.Invalidated(generation, record.state(), record.outcome(),
        record.error(), record.attempts(), (Instant) snapshot.fields().get(RecordFields.FINISHED_AT), by,
        snapshot.readTime(), truncate(reason, MAX_ERROR_CHARS));
    Map<String, Object> fields = RecordLayout.nextGeneration(record, ended, snapshot.readTime(),
        snapshot.readTime().plus(options.retention()), nonce);
    return Decision.write(true, List.of(RecordWrite.update(snapshot.id(), fields, null)), SideWrites.NONE);
  }

  @Override
  public Map<String, Map<String, Object>> read(String collection, List<String> ids) {
    return ids.isEmpty() ? Map.of() : store.read(collection, ids);
  }

  @Override
  public Map<String, Long> sum(String collection, List<String> ids, String field, Object value, List<String> fields) {
    if (fields.isEmpty()) {
      throw new IllegalArgumentException("a sum names the fields it adds up");
    }
    if (ids.size() > MAX_SUMMED) {
      throw new IllegalArgumentException("at most " + MAX_SUMMED + " documents are summed at once, got " + ids.size());
    }
    if (ids.isEmpty()) {
      Map<String, Long> none = new HashMap<>();
      fields.forEach(summed -> none.put(summed, 0L));
      return none;
    }
    return store.sum(collection, ids, field, value, fields);
  }

  @Override
  public void commit(SideWrites writes) {
    surfaced(() -> store.commit(List.of(), writes));
  }

  @Override
  public Instant now() {
    // An instance that has not talked to the store yet reads once to learn its time (any answer carries it).
    return store.time().orElseGet(() -> {
      store.read(CLOCK_PROBE);
      return store.time().orElseThrow();
    });
  }

  private Map<String, Object> finishing(RecordState state) {
    Map<String, Object> fields = written();
    fields.put(RecordFields.STATE, state.name());
    fields.put(RecordFields.FINISHED_AT, DocumentWrites.serverTime());
    return fields;
  }

  /**
   * What every write of a holder's record sets: its time, its retention (from this write: README's "last write +
   * retention"), and a fresh nonce by which the write, resent by the client or its transaction run again after its
   * answer was lost, recognises that it was applied.
   */
  private Map<String, Object> written() {
    Map<String, Object> fields = new HashMap<>();
    fields.put(RecordFields.UPDATED_AT, DocumentWrites.serverTime());
    fields.put(RecordFields.EXPIRE_AT, now().plus(options.retention()));
    fields.put(RecordFields.NONCE, RecordLayout.nonce());
    return fields;
  }
}
