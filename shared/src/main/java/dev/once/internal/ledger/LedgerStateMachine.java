package dev.once.internal.ledger;

import dev.once.internal.key.Sha256;
import dev.once.internal.ledger.ClaimResult.Acquired;
import dev.once.internal.ledger.RecordStore.Decision;
import dev.once.internal.ledger.RecordStore.RecordWrite;
import dev.once.internal.ledger.RecordStore.Refused;
import dev.once.internal.ledger.RecordStore.Snapshot;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.DocumentWrites;
import dev.once.ledger.Ledger;
import dev.once.ledger.SideWrites;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.regex.Pattern;

/**
 * The ledger's rules, written once over a {@link RecordStore}, and the only code that knows the record layout. Both
 * ledgers are this machine over their store. The rules, in one place:
 *
 * <ul>
 *   <li><b>Claim</b> is one create (precondition: the record does not exist), no transaction. When the record exists
 *       it is read once: {@code DONE} → duplicate, {@code REJECTED} → rejected, {@code CLAIMED} with a live lease →
 *       busy, {@code CLAIMED} with an expired lease → takeover. A record whose fingerprint differs from the offered
 *       one is a conflict, whatever its state.
 *   <li><b>Takeover</b> runs in a transaction that re-reads the record and increments {@code token} and
 *       {@code attempts}; the new lease starts at the transaction's read time.
 *   <li><b>Fencing</b>: complete, reject, renew and release succeed only for the current holder. A holder that
 *       created the record writes with an update-time precondition (one write, no read); a holder that took over
 *       checks its token in a transaction. A stale holder gets {@link LeaseLost} and changes nothing.
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
public class LedgerStateMachine implements Ledger {
  /** Record fields. */
  public static final String KEY = "key";
  public static final String EFFECT = "effect";
  public static final String STATE = "state";
  public static final String TOKEN = "token";
  public static final String ATTEMPTS = "attempts";
  public static final String LEASE_EXPIRES_AT = "leaseExpiresAt";
  public static final String EXPIRE_AT = "expireAt";
  public static final String FINGERPRINT = "fingerprint";
  public static final String ERROR = "error";
  public static final String OUTCOME = "outcome";
  public static final String CREATED_AT = "createdAt";
  public static final String UPDATED_AT = "updatedAt";
  public static final String FINISHED_AT = "finishedAt";
  public static final String RELEASED_BY = "releasedBy";
  public static final String RELEASED_AT = "releasedAt";
  public static final String RELEASE_REASON = "releaseReason";
  public static final String CALLS = "calls";
  public static final String SPENT = "spent";
  /** The id of the write that last changed the record: how a resent write recognises its own application. */
  public static final String NONCE = "nonce";
  /** On a rejected record: refused because its cap of tries was reached, not for its input. */
  public static final String GAVE_UP = "gaveUp";
  /** Which run of the effect the record is about (absent: the first); an operator's invalidation moves it on. */
  public static final String GENERATION = "generation";
  /** The runs an operator invalidated, oldest first: {@link LedgerRecord.Invalidated} as maps. */
  public static final String HISTORY = "history";
  /** Runs an invalidated record remembers at most (each holds its outcome: the record stays well under 1 MiB). */
  static final int HISTORY_KEPT = 10;
  /** How a give-up's reason starts, on records written before {@link #GAVE_UP} was. */
  private static final String LEGACY_GAVE_UP = "gave up after ";

  private static final Pattern EFFECT_NAME = Pattern.compile("[a-z][a-z0-9._-]{0,63}");
  private static final int MAX_ERROR_CHARS = 2000;
  private static final int MAX_CALL_ERROR_CHARS = 300;
  private static final int CREATE_ROUNDS = 3;
  /** A record id no record has (records are 64 hex digits): read only for its read time. */
  private static final String CLOCK_PROBE = "clock";

  private final RecordStore store;
  private final LedgerConfig config;

  protected LedgerStateMachine(RecordStore store, LedgerConfig config) {
    this.store = store;
    this.config = config;
  }

  /** The record id of (key, effect): a hash, because keys hold '/' and arbitrary user text. */
  public static String recordId(IdempotencyKey key, String effect) {
    if (effect == null || !EFFECT_NAME.matcher(effect).matches()) {
      throw new IllegalArgumentException("effect name must match " + EFFECT_NAME + ", got " + effect);
    }
    // The effect name cannot hold a newline, so the pair is unambiguous.
    return Sha256.hex(effect + "\n" + key.value());
  }

  @Override
  public Optional<LedgerRecord> lookup(IdempotencyKey key, String effect) {
    Snapshot snapshot = store.read(recordId(key, effect));
    return snapshot.exists() ? Optional.of(record(snapshot)) : Optional.empty();
  }

  @Override
  public ClaimResult claim(IdempotencyKey key, String effect, ClaimOptions options) {
    return surfaced(() -> claimOrJudge(key, effect, options));
  }

  private ClaimResult claimOrJudge(IdempotencyKey key, String effect, ClaimOptions options) {
    String id = recordId(key, effect);
    if (store.time().isEmpty()) {
      // A new instance has seen no store time yet: a read gives one, and answers at once if the record exists.
      Snapshot existing = store.read(id);
      if (existing.exists()) {
        return judge(id, record(existing), options);
      }
    }
    for (int round = 0; round < CREATE_ROUNDS; round++) {
      Instant now = now();
      Duration lease = options.leaseOr(config.lease());
      String nonce = nonce();
      try {
        Instant writtenAt = store.commit(
            List.of(RecordWrite.create(id, newClaim(key, effect, options, now, now.plus(lease), nonce))),
            SideWrites.NONE).get(0);
        return new Acquired(firstClaim(key, effect, id, now, lease, writtenAt));
      } catch (RuntimeException e) {
        // EXISTS may be this very create, resent by the client after its answer was lost; any other failure may have
        // been applied too. CONTENDED: a transaction (a takeover) holds the record, so it exists.
        boolean exists = e instanceof Refused refused
            && (refused.why() == Refused.Why.EXISTS || refused.why() == Refused.Why.CONTENDED);
        Snapshot snapshot = readAfter(id, e, exists);
        if (snapshot.bears(nonce)) {
          return new Acquired(firstClaim(key, effect, id, now, lease, snapshot.updateTime()));
        }
        if (snapshot.exists()) {
          return judge(id, record(snapshot), options);
        }
        if (!exists) {
          throw e;
        }
      }
      // The record vanished between our create and our read (TTL deletion): create again.
    }
    throw new LedgerUnavailable("the ledger record " + id + " kept appearing and vanishing", null);
  }

  /**
   * The record after a write to it failed with {@code failure}. When the failure says nothing of the record (not
   * {@code expected}) and the read fails too, the write's own failure is what the caller sees.
   */
  private Snapshot readAfter(String id, RuntimeException failure, boolean expected) {
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

  private static String nonce() {
    return UUID.randomUUID().toString();
  }

  /** The claim a new record gives its creator: token 1, its first try running. */
  private static Claim firstClaim(IdempotencyKey key, String effect, String id, Instant now, Duration lease,
      Instant writtenAt) {
    return new Claim(key, effect, id, 1, 1, now.plus(lease), writtenAt, lease,
        List.of(new Call(1, now, Call.Outcome.RUNNING, null)), 1, false, null);
  }

  private Map<String, Object> newClaim(
      IdempotencyKey key, String effect, ClaimOptions options, Instant now, Instant leaseExpiresAt, String nonce) {
    Map<String, Object> fields = new HashMap<>();
    fields.put(NONCE, nonce);
    fields.put(KEY, key.value());
    fields.put(EFFECT, effect);
    fields.put(STATE, RecordState.CLAIMED.name());
    fields.put(TOKEN, 1L);
    fields.put(ATTEMPTS, 1L);
    fields.put(SPENT, 1L);
    fields.put(CALLS, calls(List.of(new Call(1, now, Call.Outcome.RUNNING, null))));
    fields.put(LEASE_EXPIRES_AT, leaseExpiresAt);
    // An abandoned claim is cleaned up by the TTL policy too.
    fields.put(EXPIRE_AT, now.plus(config.retention()));
    fields.put(FINGERPRINT, options.fingerprint());
    fields.put(ERROR, null);
    fields.put(CREATED_AT, DocumentWrites.serverTime());
    fields.put(UPDATED_AT, DocumentWrites.serverTime());
    return fields;
  }

  private ClaimResult judge(String id, LedgerRecord record, ClaimOptions options) {
    ClaimResult settled = ClaimResult.settled(record, options.fingerprint());
    return settled instanceof ClaimResult.Expired
        ? takeOver(id, IdempotencyKey.of(record.key()), record.effect(), options)
        : settled;
  }

  private ClaimResult takeOver(String id, IdempotencyKey key, String effect, ClaimOptions options) {
    // One nonce for every run of the body: a run after a commit whose answer was lost finds it on the record.
    String nonce = nonce();
    Duration lease = options.leaseOr(config.lease());
    try {
      return store.transact(id, snapshot -> takeOver(snapshot, key, effect, options, nonce, lease));
    } catch (RuntimeException e) {
      // Its commit applied, the answer lost and the commit resent: the transaction is closed by then, and the client
      // reports the resend's failure. The record bearing the nonce says it was applied.
      return bearing(id, nonce, e)
          .map(snapshot -> (ClaimResult) new Acquired(asWritten(record(snapshot), key, effect, lease)))
          .orElseThrow(() -> e);
    }
  }

  private Decision<ClaimResult> takeOver(Snapshot snapshot, IdempotencyKey key, String effect, ClaimOptions options,
      String nonce, Duration lease) {
    String id = snapshot.id();
    Instant readTime = snapshot.readTime();
    if (!snapshot.exists()) {
      // Deleted meanwhile (TTL): claim it afresh, inside this transaction.
      return Decision.write(new Acquired(firstClaim(key, effect, id, readTime, lease, null)),
          List.of(RecordWrite.create(id, newClaim(key, effect, options, readTime, readTime.plus(lease), nonce))),
          SideWrites.NONE);
    }
    LedgerRecord record = record(snapshot);
    if (snapshot.bears(nonce)) {
      return Decision.answer(new Acquired(asWritten(record, key, effect, lease)));
    }
    ClaimResult settled = ClaimResult.settled(record, options.fingerprint());
    if (!(settled instanceof ClaimResult.Expired)) {
      return Decision.answer(settled);
    }
    Takeover takeover = Takeover.of(record, options, readTime);
    Map<String, Object> fields = new HashMap<>();
    fields.put(TOKEN, takeover.token());
    fields.put(ATTEMPTS, (long) takeover.attempts());
    fields.put(SPENT, (long) takeover.spent());
    fields.put(CALLS, calls(takeover.calls()));
    fields.put(LEASE_EXPIRES_AT, readTime.plus(lease));
    fields.put(EXPIRE_AT, readTime.plus(config.retention()));
    fields.put(UPDATED_AT, DocumentWrites.serverTime());
    fields.put(NONCE, nonce);
    if (record.fingerprint() == null && options.fingerprint() != null) {
      fields.put(FINGERPRINT, options.fingerprint());
    }
    // A takeover is fenced by its token: a transaction does not report its commit time.
    return Decision.write(new Acquired(takeover.claim(key, effect, id, readTime.plus(lease), null, lease)),
        List.of(RecordWrite.update(id, fields, null)), SideWrites.NONE);
  }

  /**
   * The claim a takeover (or a claim made inside its transaction) wrote, read back from the record by a run of its
   * transaction's body after the commit's answer was lost; fenced by its token, as every takeover's claim.
   */
  private static Claim asWritten(LedgerRecord record, IdempotencyKey key, String effect, Duration lease) {
    List<Call> calls = record.calls();
    // A takeover handed over exhausted records no try: its last one is not this holder's running one.
    boolean exhausted = calls.isEmpty() || calls.get(calls.size() - 1).outcome() != Call.Outcome.RUNNING
        || calls.get(calls.size() - 1).number() != record.attempts();
    return new Claim(key, effect, record.recordId(), record.token(), record.attempts(), record.leaseExpiresAt(), null,
        lease, calls, record.spent(), exhausted, record.error(), record.generation());
  }

  @Override
  public Claim renew(Claim claim, Duration lease) {
    return surfaced(() -> {
      Instant leaseExpiresAt = now().plus(lease);
      Map<String, Object> fields = written();
      fields.put(LEASE_EXPIRES_AT, leaseExpiresAt);
      Fenced written = fence(claim, fields, SideWrites.NONE, null, "renew");
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
    fields.put(OUTCOME, outcome == null ? Map.of() : outcome);
    fields.put(CALLS, calls(claim.callsEnded(Call.Outcome.DONE, null)));
    if (next == null) {
      fence(claim, fields, writes, null, "complete");
      return Optional.empty();
    }
    String nextId = recordId(claim.key(), next.effect());
    Instant now = now();
    Duration lease = next.options().leaseOr(config.lease());
    try {
      Fenced written = fence(claim, fields, writes, RecordWrite.create(nextId,
          newClaim(claim.key(), next.effect(), next.options(), now, now.plus(lease), nonce())), "complete");
      return Optional.of(firstClaim(claim.key(), next.effect(), nextId, now, lease, written.nextWrittenAt()));
    } catch (Refused e) {
      if (e.why() != Refused.Why.EXISTS) {
        throw e;
      }
      if (appliedAlready(claim.recordId(), fields, e)) {
        // This commit, resent after its answer was lost, found the next claim it had made itself.
        return Optional.of(firstClaim(claim.key(), next.effect(), nextId, now, lease, null));
      }
      // An earlier holder got as far as the next effect: complete alone; the next effect is claimed as usual.
      fence(claim, fields, writes, null, "complete");
      return Optional.empty();
    }
  }

  /** Whether the record bears the nonce of {@code fields}: the write was applied (its answer lost). */
  private boolean appliedAlready(String recordId, Map<String, Object> fields, RuntimeException failure) {
    return bearing(recordId, (String) fields.get(NONCE), failure).isPresent();
  }

  /**
   * The record, read after a write to it failed with {@code failure}, when it bears {@code nonce}: the write was
   * applied and its answer lost. When the read fails too, {@code failure} is thrown.
   */
  private Optional<Snapshot> bearing(String id, String nonce, RuntimeException failure) {
    Snapshot snapshot = readAfter(id, failure, false);
    return snapshot.bears(nonce) ? Optional.of(snapshot) : Optional.empty();
  }

  @Override
  public void reject(Claim claim, String reason, boolean gaveUp, SideWrites writes) {
    surfaced(() -> {
      Map<String, Object> fields = finishing(RecordState.REJECTED);
      fields.put(ERROR, truncate(reason, MAX_ERROR_CHARS));
      if (gaveUp) {
        fields.put(GAVE_UP, true);
      }
      fields.put(CALLS, calls(claim.callsEnded(Call.Outcome.REJECTED, truncate(reason, MAX_CALL_ERROR_CHARS))));
      return fence(claim, fields, writes, null, "reject");
    });
  }

  @Override
  public void release(Claim claim, String error, boolean mayHaveRun, SideWrites writes) {
    surfaced(() -> {
      Map<String, Object> fields = written();
      // The token moves on: a release resent by the client (its answer lost) finds its nonce and is done, and the
      // token would refuse it regardless; it is never applied twice with its writes (a reservation given back twice).
      fields.put(TOKEN, claim.token() + 1);
      fields.put(LEASE_EXPIRES_AT, DocumentWrites.serverTime());
      fields.put(ERROR, truncate(error, MAX_ERROR_CHARS));
      fields.put(CALLS, calls(claim.callsEnded(mayHaveRun ? Call.Outcome.FAILED : Call.Outcome.NOT_PERFORMED,
          truncate(error, MAX_CALL_ERROR_CHARS))));
      fields.put(SPENT, (long) (mayHaveRun || claim.exhausted() ? claim.spent() : claim.spent() - 1));
      return fence(claim, fields, writes, null, "release");
    });
  }

  @Override
  public void forceRelease(IdempotencyKey key, String effect, long token, String by, String reason,
      boolean evenIfLive) {
    Map<String, Object> fields = written();
    fields.put(TOKEN, token + 1);
    fields.put(LEASE_EXPIRES_AT, DocumentWrites.serverTime());
    fields.put(RELEASED_BY, by);
    fields.put(RELEASED_AT, DocumentWrites.serverTime());
    fields.put(RELEASE_REASON, truncate(reason, MAX_ERROR_CHARS));
    Predicate<Snapshot> leaseOver = snapshot -> {
      Instant lease = (Instant) snapshot.fields().get(LEASE_EXPIRES_AT);
      return evenIfLive || lease == null || !lease.isAfter(snapshot.readTime());
    };
    boolean released = surfaced(() ->
        heldByToken(recordId(key, effect), token, leaseOver, fields, SideWrites.NONE, null, "release"));
    if (!released) {
      throw new LeaseLost("cannot release " + effect + " for " + key + ": token " + token
          + " no longer holds the claim (taken over, or finished)"
          + (evenIfLive ? "" : ", or its lease is live again (renewed since it was read)"));
    }
  }

  @Override
  public boolean invalidate(IdempotencyKey key, String effect, int generation, String by, String reason) {
    String id = recordId(key, effect);
    // One nonce for every run of the body: a run after a commit whose answer was lost finds it on the record.
    String nonce = nonce();
    try {
      return store.transact(id, snapshot -> invalidated(snapshot, generation, by, reason, nonce));
    } catch (RuntimeException e) {
      if (bearing(id, nonce, e).isPresent()) {
        return true;
      }
      throw Refused.original(e);
    }
  }

  /** The record, finished in {@code generation}, as the next generation's claim with no try and its lease over. */
  private Decision<Boolean> invalidated(Snapshot snapshot, int generation, String by, String reason, String nonce) {
    if (snapshot.bears(nonce)) {
      return Decision.answer(true);
    }
    if (!snapshot.exists()) {
      return Decision.answer(false);
    }
    LedgerRecord record = record(snapshot);
    boolean finished = record.state() == RecordState.DONE || record.state() == RecordState.REJECTED;
    if (!finished || record.generation() != generation) {
      return Decision.answer(false); // running, waiting for a redelivery, or invalidated since it was read
    }
    List<Map<String, Object>> history = new ArrayList<>();
    record.history().forEach(run -> history.add(run.toMap()));
    history.add(new LedgerRecord.Invalidated(generation, record.state(), record.outcome(), record.error(),
        record.attempts(), (Instant) snapshot.fields().get(FINISHED_AT), by, snapshot.readTime(),
        truncate(reason, MAX_ERROR_CHARS)).toMap());
    Map<String, Object> fields = new HashMap<>();
    fields.put(STATE, RecordState.CLAIMED.name());
    fields.put(GENERATION, (long) generation + 1);
    fields.put(HISTORY, new ArrayList<>(history.subList(Math.max(0, history.size() - HISTORY_KEPT), history.size())));
    fields.put(TOKEN, record.token() + 1);
    fields.put(ATTEMPTS, 0L);
    fields.put(SPENT, 0L);
    fields.put(CALLS, List.of());
    fields.put(LEASE_EXPIRES_AT, snapshot.readTime());
    for (String ended : List.of(OUTCOME, ERROR, GAVE_UP, FINISHED_AT, RELEASED_BY, RELEASED_AT, RELEASE_REASON)) {
      fields.put(ended, null);
    }
    fields.put(UPDATED_AT, DocumentWrites.serverTime());
    fields.put(EXPIRE_AT, snapshot.readTime().plus(config.retention()));
    fields.put(NONCE, nonce);
    return Decision.write(true, List.of(RecordWrite.update(snapshot.id(), fields, null)), SideWrites.NONE);
  }

  @Override
  public Map<String, Map<String, Object>> read(String collection, List<String> ids) {
    return ids.isEmpty() ? Map.of() : store.read(collection, ids);
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
    fields.put(STATE, state.name());
    fields.put(FINISHED_AT, DocumentWrites.serverTime());
    return fields;
  }

  /**
   * What every write of a holder's record sets: its time, its retention (from this write: README's "last write +
   * retention"), and a fresh nonce by which the write, resent by the client or its transaction run again after its
   * answer was lost, recognises that it was applied.
   */
  private Map<String, Object> written() {
    Map<String, Object> fields = new HashMap<>();
    fields.put(UPDATED_AT, DocumentWrites.serverTime());
    fields.put(EXPIRE_AT, now().plus(config.retention()));
    fields.put(NONCE, nonce());
    return fields;
  }

  /** The update times a fenced commit reported (null after a transaction, which reports none). */
  private record Fenced(Instant recordWrittenAt, Instant nextWrittenAt) {}

  /**
   * Writes {@code fields}, {@code writes} and {@code create} in one commit, only while {@code claim}'s holder holds
   * it: by the claim's update time (one write) when it has one, else by its token in a transaction. A failed update
   * time is not proof of a lost claim: this holder's own earlier write may have moved it (a renewal applied whose
   * answer was lost), or this very write may have (resent by the client after its answer was lost), so the token
   * transaction decides then, and recognises this write by its nonce. Tokens move on with every takeover and every
   * operator's release.
   */
  private Fenced fence(Claim claim, Map<String, Object> fields, SideWrites writes, RecordWrite create, String action) {
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
    if (!heldByToken(claim.recordId(), claim.token(), snapshot -> true, fields, writes, create, action)) {
      throw new LeaseLost("cannot " + action + " " + claim.effect() + " for " + claim.key() + ": token "
          + claim.token() + " no longer holds the claim (taken over after its lease expired, or finished)");
    }
    return new Fenced(null, null);
  }

  /**
   * In a transaction: when the record is still claimed with {@code token} and {@code also} holds of it, writes
   * {@code fields}, {@code create} and {@code writes}. Whether it wrote.
   */
  private boolean heldByToken(String id, long token, Predicate<Snapshot> also, Map<String, Object> fields,
      SideWrites writes, RecordWrite create, String action) {
    try {
      return store.transact(id, snapshot -> {
        if (snapshot.bears((String) fields.get(NONCE))) {
          // This write was applied already: the one-write commit, or this transaction's own, lost its answer and was
          // resent (refused by its precondition) or is being run again.
          return Decision.answer(true);
        }
        if (!snapshot.exists()
            || !RecordState.CLAIMED.name().equals(snapshot.fields().get(STATE))
            || !Objects.equals(number(snapshot.fields().get(TOKEN)), token)
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

  /** Runs {@code step}, letting a caller see what the store threw, never the machine's reading of it. */
  private static <T> T surfaced(Supplier<T> step) {
    try {
      return step.get();
    } catch (Refused e) {
      throw Refused.original(e);
    }
  }

  private static LedgerRecord record(Snapshot snapshot) {
    Map<String, Object> fields = snapshot.fields();
    Object state = fields.get(STATE);
    Long token = number(fields.get(TOKEN));
    Long attempts = number(fields.get(ATTEMPTS));
    Long spent = number(fields.get(SPENT));
    @SuppressWarnings("unchecked")
    Map<String, Object> outcome = (Map<String, Object>) fields.get(OUTCOME);
    return new LedgerRecord(
        snapshot.id(),
        (String) fields.get(KEY),
        (String) fields.get(EFFECT),
        state == null ? RecordState.CLAIMED : RecordState.valueOf((String) state),
        token == null ? 0 : token,
        attempts == null ? 0 : attempts.intValue(),
        (Instant) fields.get(LEASE_EXPIRES_AT),
        (Instant) fields.get(EXPIRE_AT),
        (String) fields.get(FINGERPRINT),
        (String) fields.get(ERROR),
        outcome == null ? Map.of() : outcome,
        (Instant) fields.get(CREATED_AT),
        (Instant) fields.get(UPDATED_AT),
        snapshot.readTime(),
        fields.get(RELEASED_BY) == null ? null : new LedgerRecord.Released((String) fields.get(RELEASED_BY),
            (Instant) fields.get(RELEASED_AT), (String) fields.get(RELEASE_REASON)),
        callsOf(fields.get(CALLS)),
        // Records written before tries were counted: every attempt may have run.
        spent == null ? (attempts == null ? 0 : attempts.intValue()) : spent.intValue(),
        gaveUp(fields.get(GAVE_UP), (String) fields.get(ERROR)),
        number(fields.get(GENERATION)) == null ? 1 : number(fields.get(GENERATION)).intValue(),
        LedgerRecord.Invalidated.listOf(fields.get(HISTORY)));
  }

  /** Whether a rejected record's {@link #GAVE_UP} field (or, on a record older than it, its reason) says given up. */
  public static boolean gaveUp(Object field, String error) {
    return field == null ? error != null && error.startsWith(LEGACY_GAVE_UP) : Boolean.TRUE.equals(field);
  }

  private static Long number(Object value) {
    return value instanceof Number n ? n.longValue() : null;
  }

  private static String truncate(String text, int max) {
    if (text == null) {
      return null;
    }
    return text.length() <= max ? text : text.substring(0, max) + "…";
  }

  /** The tries as stored: a list of maps, oldest first. */
  private static List<Map<String, Object>> calls(List<Call> calls) {
    return calls.stream().map(Call::toMap).toList();
  }

  private static List<Call> callsOf(Object stored) {
    if (!(stored instanceof List<?> list)) {
      return List.of();
    }
    List<Call> calls = new ArrayList<>();
    for (Object item : list) {
      if (item instanceof Map<?, ?> call) {
        calls.add(Call.fromMap(call));
      }
    }
    return calls;
  }
}
