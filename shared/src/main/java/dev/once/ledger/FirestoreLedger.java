package dev.once.ledger;

import com.google.api.core.ApiFuture;
import com.google.api.core.ApiFutures;
import com.google.cloud.Timestamp;
import com.google.cloud.firestore.CollectionReference;
import com.google.cloud.firestore.DocumentReference;
import com.google.cloud.firestore.DocumentSnapshot;
import com.google.cloud.firestore.FieldValue;
import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.Precondition;
import com.google.cloud.firestore.TransactionOptions;
import com.google.cloud.firestore.WriteBatch;
import com.google.cloud.firestore.WriteResult;
import com.google.common.util.concurrent.MoreExecutors;
import dev.once.key.IdempotencyKey;
import dev.once.key.Sha256;
import dev.once.ledger.ClaimResult.Acquired;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;
import java.util.regex.Pattern;

/**
 * The Firestore ledger, and the only code that knows its record layout. The rules, in one place:
 *
 * <ul>
 *   <li><b>Claim</b> is one {@code create()} (precondition: the record does not exist), no transaction. When the
 *       record exists it is read once: {@code DONE} → duplicate, {@code REJECTED} → rejected, {@code CLAIMED}
 *       with a live lease → busy, {@code CLAIMED} with an expired lease → takeover. A record whose fingerprint
 *       differs from the offered one is a conflict, whatever its state.
 *   <li><b>Takeover</b> runs in a transaction that re-reads the record and increments {@code token} and
 *       {@code attempts}; the new lease starts at the transaction's read time.
 *   <li><b>Fencing</b>: complete, reject and release succeed only for the current holder. A holder that created
 *       the record writes with an update-time precondition (one write, no read); a holder that took over checks
 *       its token in a transaction. A stale holder gets {@link LeaseLost} and changes nothing.
 *   <li><b>Server time</b>: a lease is live when its {@code leaseExpiresAt} is after the read time Firestore
 *       reports; the instance clock only contributes through {@link ServerClock}'s offset-corrected estimate.
 *   <li><b>Release</b> keeps the record {@code CLAIMED} with {@code leaseExpiresAt} set to the release's own
 *       commit time, so the next delivery takes over at once, with {@code attempts} and the last {@code error}.
 *   <li><b>Retention</b>: {@code expireAt} (the TTL field) is the last write's time plus the retention period.
 *   <li><b>Resent writes</b>: the client resends a commit whose answer was lost, and runs a transaction's body again
 *       when its commit failed. Every write of a record carries a fresh {@code nonce}, so a write that finds the
 *       record already bearing its own nonce knows it was applied: a resent claim is its creator's own, not another
 *       holder's; a resent takeover, completion, rejection, renewal or release is done, not lost.
 * </ul>
 */
public final class FirestoreLedger implements Ledger {
  /** Record fields. */
  static final String KEY = "key";
  static final String EFFECT = "effect";
  static final String STATE = "state";
  static final String TOKEN = "token";
  static final String ATTEMPTS = "attempts";
  static final String LEASE_EXPIRES_AT = "leaseExpiresAt";
  public static final String EXPIRE_AT = "expireAt";
  static final String FINGERPRINT = "fingerprint";
  static final String ERROR = "error";
  static final String OUTCOME = "outcome";
  static final String CREATED_AT = "createdAt";
  static final String UPDATED_AT = "updatedAt";
  static final String FINISHED_AT = "finishedAt";
  static final String RELEASED_BY = "releasedBy";
  static final String RELEASED_AT = "releasedAt";
  static final String RELEASE_REASON = "releaseReason";
  static final String CALLS = "calls";
  static final String SPENT = "spent";
  /** The id of the write that last changed the record: how a resent write recognises its own application. */
  static final String NONCE = "nonce";

  private static final Pattern EFFECT_NAME = Pattern.compile("[a-z][a-z0-9._-]{0,63}");
  private static final int MAX_ERROR_CHARS = 2000;
  private static final int MAX_CALL_ERROR_CHARS = 300;
  private static final int CREATE_ROUNDS = 3;
  /** A document id no record has (records are 64 hex digits): read only for its read time. */
  private static final String CLOCK_PROBE = "clock";

  private final Firestore db;
  private final LedgerConfig config;
  private final CollectionReference records;
  private final ServerClock serverClock;
  private final TransactionOptions takeoverOptions;

  public FirestoreLedger(Firestore db, LedgerConfig config) {
    this(db, config, InstantSource.system());
  }

  /** {@code instanceClock} is this instance's clock, which may be wrong; tests pass a skewed one. */
  public FirestoreLedger(Firestore db, LedgerConfig config, InstantSource instanceClock) {
    this.db = db;
    this.config = config;
    this.records = db.collection(config.collection());
    this.serverClock = new ServerClock(instanceClock);
    this.takeoverOptions =
        TransactionOptions.createReadWriteOptionsBuilder().setNumberOfAttempts(config.takeoverAttempts()).build();
  }

  /** The record id of (key, effect): a hash, because keys hold '/' and arbitrary user text. */
  public static String recordId(IdempotencyKey key, String effect) {
    checkEffect(effect);
    // The effect name cannot hold a newline, so the pair is unambiguous.
    return Sha256.hex(effect + "\n" + key.value());
  }

  private static void checkEffect(String effect) {
    if (effect == null || !EFFECT_NAME.matcher(effect).matches()) {
      throw new IllegalArgumentException("effect name must match " + EFFECT_NAME + ", got " + effect);
    }
  }

  @Override
  public Optional<LedgerRecord> lookup(IdempotencyKey key, String effect) {
    DocumentSnapshot snapshot = await(ref(key, effect).get(), "read the ledger record");
    serverClock.observe(snapshot.getReadTime());
    return snapshot.exists() ? Optional.of(toRecord(snapshot)) : Optional.empty();
  }

  @Override
  public ClaimResult claim(IdempotencyKey key, String effect, ClaimOptions options) {
    DocumentReference ref = ref(key, effect);
    if (!serverClock.calibrated()) {
      // A new instance has seen no server time yet: a read gives one, and answers at once if the record exists.
      Optional<LedgerRecord> existing = lookup(key, effect);
      if (existing.isPresent()) {
        return judge(ref, existing.get(), options);
      }
    }
    for (int round = 0; round < CREATE_ROUNDS; round++) {
      Instant now = serverClock.now();
      Duration lease = options.leaseOr(config.lease());
      String nonce = nonce();
      try {
        WriteResult written = await(ref.create(newClaim(key, effect, options, now, now.plus(lease), nonce)),
            "create the claim");
        serverClock.observe(written.getUpdateTime());
        return new Acquired(firstClaim(key, effect, ref.getId(), now, lease, Times.instant(written.getUpdateTime())));
      } catch (RuntimeException e) {
        // ALREADY_EXISTS may be this very create, resent by the client after its answer was lost; any other failure
        // may have been applied too. ABORTED: a transaction (a takeover) holds the record, so it exists.
        boolean exists = StatusCodes.is(e, "ALREADY_EXISTS") || StatusCodes.is(e, "ABORTED");
        DocumentSnapshot snapshot = readAfter(ref, e, exists);
        if (snapshot.exists() && nonce.equals(snapshot.getString(NONCE))) {
          Instant writtenAt = Times.instant(snapshot.getUpdateTime());
          return new Acquired(firstClaim(key, effect, ref.getId(), now, lease, writtenAt));
        }
        if (snapshot.exists()) {
          return judge(ref, toRecord(snapshot), options);
        }
        if (!exists) {
          throw e;
        }
      }
      // The record vanished between our create and our read (TTL deletion): create again.
    }
    throw new LedgerUnavailable("the ledger record " + ref.getId() + " kept appearing and vanishing", null);
  }

  /**
   * The record after a write to it failed with {@code failure}. When the failure says nothing of the record (not
   * {@code expected}) and the read fails too, the write's own failure is what the caller sees.
   */
  private DocumentSnapshot readAfter(DocumentReference ref, RuntimeException failure, boolean expected) {
    try {
      DocumentSnapshot snapshot = await(ref.get(), "read the ledger record");
      serverClock.observe(snapshot.getReadTime());
      return snapshot;
    } catch (RuntimeException unreadable) {
      if (expected) {
        throw unreadable;
      }
      failure.addSuppressed(unreadable);
      throw failure;
    }
  }

  private static String nonce() {
    return UUID.randomUUID().toString();
  }

  /** The claim a new record gives its creator: token 1, its first try running. */
  private static Claim firstClaim(IdempotencyKey key, String effect, String id, Instant now, Duration lease,
      Instant writtenAt) {
    return new Claim(key, effect, id, 1, 1, now.plus(lease), writtenAt, lease,
        List.of(new Call(1, now, Call.RUNNING, null)), 1, false, null);
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
    fields.put(CALLS, calls(List.of(new Call(1, now, Call.RUNNING, null))));
    fields.put(LEASE_EXPIRES_AT, Times.timestamp(leaseExpiresAt));
    // An abandoned claim is cleaned up by the TTL policy too.
    fields.put(EXPIRE_AT, Times.timestamp(now.plus(config.retention())));
    fields.put(FINGERPRINT, options.fingerprint());
    fields.put(ERROR, null);
    fields.put(CREATED_AT, FieldValue.serverTimestamp());
    fields.put(UPDATED_AT, FieldValue.serverTimestamp());
    return fields;
  }

  private ClaimResult judge(DocumentReference ref, LedgerRecord record, ClaimOptions options) {
    ClaimResult settled = ClaimResult.settled(record, options.fingerprint());
    return settled instanceof ClaimResult.Expired
        ? takeOver(ref, IdempotencyKey.of(record.key()), record.effect(), options)
        : settled;
  }

  /*
   * Transactions here are asynchronous on purpose: the client runs a transaction's callback on its own small
   * executor, and a callback that blocks on its read starves that executor once a handful of transactions run
   * at once (16 concurrent takeovers of one record hung every Firestore call of the process).
   */
  private ClaimResult takeOver(DocumentReference ref, IdempotencyKey key, String effect, ClaimOptions options) {
    // One nonce for every run of the body: a run after a commit whose answer was lost finds it on the record.
    String nonce = nonce();
    Duration lease = options.leaseOr(config.lease());
    try {
      return takeOver(ref, key, effect, options, nonce, lease);
    } catch (RuntimeException e) {
      // Its commit applied, the answer lost and the commit resent: the transaction is closed by then, and the client
      // reports the resend's INVALID_ARGUMENT. The record bearing the nonce says it was applied.
      return bearing(ref, nonce, e)
          .map(snapshot -> (ClaimResult) new Acquired(asWritten(toRecord(snapshot), key, effect, lease)))
          .orElseThrow(() -> e);
    }
  }

  private ClaimResult takeOver(DocumentReference ref, IdempotencyKey key, String effect, ClaimOptions options,
      String nonce, Duration lease) {
    return await(db.runAsyncTransaction(tx -> ApiFutures.transform(tx.get(ref), snapshot -> {
      serverClock.observe(snapshot.getReadTime());
      Instant readTime = Times.instant(snapshot.getReadTime());
      if (!snapshot.exists()) {
        // Deleted meanwhile (TTL): claim it afresh, inside this transaction.
        tx.create(ref, newClaim(key, effect, options, readTime, readTime.plus(lease), nonce));
        return (ClaimResult) new Acquired(firstClaim(key, effect, ref.getId(), readTime, lease, null));
      }
      LedgerRecord record = toRecord(snapshot);
      if (nonce.equals(snapshot.getString(NONCE))) {
        return new Acquired(asWritten(record, key, effect, lease));
      }
      ClaimResult settled = ClaimResult.settled(record, options.fingerprint());
      if (!(settled instanceof ClaimResult.Expired)) {
        return settled;
      }
      Takeover takeover = Takeover.of(record, options, readTime);
      Map<String, Object> fields = new HashMap<>();
      fields.put(TOKEN, takeover.token());
      fields.put(ATTEMPTS, (long) takeover.attempts());
      fields.put(SPENT, (long) takeover.spent());
      fields.put(CALLS, calls(takeover.calls()));
      fields.put(LEASE_EXPIRES_AT, Times.timestamp(readTime.plus(lease)));
      fields.put(EXPIRE_AT, Times.timestamp(readTime.plus(config.retention())));
      fields.put(UPDATED_AT, FieldValue.serverTimestamp());
      fields.put(NONCE, nonce);
      if (record.fingerprint() == null && options.fingerprint() != null) {
        fields.put(FINGERPRINT, options.fingerprint());
      }
      tx.update(ref, fields);
      return new Acquired(takeover.claim(key, effect, ref.getId(), readTime.plus(lease), null, lease));
    }, MoreExecutors.directExecutor()), takeoverOptions), "take over an expired claim");
  }

  /**
   * The claim a takeover (or a claim made inside its transaction) wrote, read back from the record by a run of its
   * transaction's body after the commit's answer was lost; fenced by its token, as every takeover's claim.
   */
  private static Claim asWritten(LedgerRecord record, IdempotencyKey key, String effect, Duration lease) {
    List<Call> calls = record.calls();
    // A takeover handed over exhausted records no try: its last one is not this holder's running one.
    boolean exhausted = calls.isEmpty() || !Call.RUNNING.equals(calls.get(calls.size() - 1).outcome())
        || calls.get(calls.size() - 1).number() != record.attempts();
    return new Claim(key, effect, record.recordId(), record.token(), record.attempts(), record.leaseExpiresAt(), null,
        lease, calls, record.spent(), exhausted, record.error());
  }

  @Override
  public Claim renew(Claim claim, Duration lease) {
    Instant leaseExpiresAt = now().plus(lease);
    Map<String, Object> fields = written();
    fields.put(LEASE_EXPIRES_AT, Times.timestamp(leaseExpiresAt));
    Fenced written = fence(claim, fields, SideWrites.NONE, null, "renew");
    return claim.renewed(leaseExpiresAt, written.recordWrittenAt(), lease);
  }

  @Override
  public Optional<Claim> complete(Claim claim, Map<String, Object> outcome, SideWrites writes, NextClaim next) {
    Map<String, Object> fields = finishing(RecordState.DONE);
    fields.put(OUTCOME, outcome == null ? Map.of() : outcome);
    fields.put(CALLS, calls(claim.callsEnded(Call.DONE, null)));
    if (next == null) {
      fence(claim, fields, writes, null, "complete");
      return Optional.empty();
    }
    DocumentReference nextRef = ref(claim.key(), next.effect());
    Instant now = now();
    Duration lease = next.options().leaseOr(config.lease());
    try {
      Fenced written = fence(claim, fields, writes, new Create(nextRef,
          newClaim(claim.key(), next.effect(), next.options(), now, now.plus(lease), nonce())), "complete");
      return Optional.of(firstClaim(claim.key(), next.effect(), nextRef.getId(), now, lease, written.nextWrittenAt()));
    } catch (RuntimeException e) {
      if (!StatusCodes.is(e, "ALREADY_EXISTS")) {
        throw e;
      }
      if (appliedAlready(claim.recordId(), fields, e)) {
        // This commit, resent after its answer was lost, found the next claim it had made itself.
        return Optional.of(firstClaim(claim.key(), next.effect(), nextRef.getId(), now, lease, null));
      }
      // An earlier holder got as far as the next effect: complete alone; the next effect is claimed as usual.
      fence(claim, fields, writes, null, "complete");
      return Optional.empty();
    }
  }

  /** Whether the record bears the nonce of {@code fields}: the write was applied (its answer lost). */
  private boolean appliedAlready(String recordId, Map<String, Object> fields, RuntimeException failure) {
    return bearing(records.document(recordId), (String) fields.get(NONCE), failure).isPresent();
  }

  /**
   * The record, read after a write to it failed with {@code failure}, when it bears {@code nonce}: the write was
   * applied and its answer lost. When the read fails too, {@code failure} is thrown.
   */
  private Optional<DocumentSnapshot> bearing(DocumentReference ref, String nonce, RuntimeException failure) {
    DocumentSnapshot snapshot = readAfter(ref, failure, false);
    return snapshot.exists() && nonce.equals(snapshot.getString(NONCE)) ? Optional.of(snapshot) : Optional.empty();
  }

  @Override
  public void reject(Claim claim, String reason, SideWrites writes) {
    Map<String, Object> fields = finishing(RecordState.REJECTED);
    fields.put(ERROR, truncate(reason));
    fields.put(CALLS, calls(claim.callsEnded(Call.REJECTED, truncate(reason, MAX_CALL_ERROR_CHARS))));
    fence(claim, fields, writes, null, "reject");
  }

  @Override
  public void release(Claim claim, String error, boolean mayHaveRun, SideWrites writes) {
    Map<String, Object> fields = written();
    // The token moves on: a release resent by the client (its answer lost) finds its nonce and is done, and the token
    // would refuse it regardless; it is never applied twice with its writes (a reservation given back twice).
    fields.put(TOKEN, claim.token() + 1);
    fields.put(LEASE_EXPIRES_AT, FieldValue.serverTimestamp());
    fields.put(ERROR, truncate(error));
    fields.put(CALLS, calls(claim.callsEnded(mayHaveRun ? Call.FAILED : Call.NOT_PERFORMED,
        truncate(error, MAX_CALL_ERROR_CHARS))));
    fields.put(SPENT, (long) (mayHaveRun || claim.exhausted() ? claim.spent() : claim.spent() - 1));
    fence(claim, fields, writes, null, "release");
  }

  @Override
  public void forceRelease(IdempotencyKey key, String effect, long token, String by, String reason,
      boolean evenIfLive) {
    Map<String, Object> fields = written();
    fields.put(TOKEN, token + 1);
    fields.put(LEASE_EXPIRES_AT, FieldValue.serverTimestamp());
    fields.put(RELEASED_BY, by);
    fields.put(RELEASED_AT, FieldValue.serverTimestamp());
    fields.put(RELEASE_REASON, truncate(reason));
    Predicate<DocumentSnapshot> leaseOver = snapshot -> {
      Timestamp lease = snapshot.getTimestamp(LEASE_EXPIRES_AT);
      return evenIfLive || lease == null || lease.compareTo(snapshot.getReadTime()) <= 0;
    };
    if (!heldByToken(recordId(key, effect), token, leaseOver, fields, SideWrites.NONE, null, "release")) {
      throw releaseRefused(key, effect, token, evenIfLive);
    }
  }

  static LeaseLost releaseRefused(IdempotencyKey key, String effect, long token, boolean evenIfLive) {
    return new LeaseLost("cannot release " + effect + " for " + key + ": token " + token + " no longer holds the claim"
        + " (taken over, or finished)" + (evenIfLive ? "" : ", or its lease is live again (renewed since it was read)"));
  }

  @Override
  public Map<String, Map<String, Object>> read(String collection, List<String> ids) {
    if (ids.isEmpty()) {
      return Map.of();
    }
    DocumentReference[] refs = ids.stream().map(id -> FirestoreWrites.ref(db, collection, id))
        .toArray(DocumentReference[]::new);
    Map<String, Map<String, Object>> found = new LinkedHashMap<>();
    for (DocumentSnapshot snapshot : await(db.getAll(refs), "read " + collection)) {
      serverClock.observe(snapshot.getReadTime());
      if (snapshot.exists()) {
        Map<String, Object> fields = new LinkedHashMap<>(snapshot.getData());
        fields.replaceAll((name, value) -> value instanceof com.google.cloud.Timestamp time ? Times.instant(time) : value);
        found.put(snapshot.getId(), fields);
      }
    }
    return found;
  }

  @Override
  public void commit(SideWrites writes) {
    WriteBatch batch = db.batch();
    writes.addTo(new FirestoreWrites(db, batch));
    List<WriteResult> results = await(batch.commit(), "commit");
    if (!results.isEmpty()) {
      serverClock.observe(results.get(0).getUpdateTime());
    }
  }

  @Override
  public Instant now() {
    calibrate();
    return serverClock.now();
  }

  /** An instance that has not talked to Firestore yet reads once to learn its time (any answer carries it). */
  private void calibrate() {
    if (!serverClock.calibrated()) {
      serverClock.observe(await(records.document(CLOCK_PROBE).get(), "read Firestore's time").getReadTime());
    }
  }

  private Map<String, Object> finishing(RecordState state) {
    Map<String, Object> fields = written();
    fields.put(STATE, state.name());
    fields.put(FINISHED_AT, FieldValue.serverTimestamp());
    return fields;
  }

  /**
   * What every write of a holder's record sets: its time, its retention (from this write: README's "last write +
   * retention"), and a fresh nonce by which the write, resent by the client or its transaction run again after its
   * answer was lost, recognises that it was applied.
   */
  private Map<String, Object> written() {
    calibrate();
    Map<String, Object> fields = new HashMap<>();
    fields.put(UPDATED_AT, FieldValue.serverTimestamp());
    fields.put(EXPIRE_AT, Times.timestamp(serverClock.now().plus(config.retention())));
    fields.put(NONCE, nonce());
    return fields;
  }

  /** A record created in the same commit (the next effect's claim). */
  private record Create(DocumentReference ref, Map<String, Object> fields) {}

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
  private Fenced fence(Claim claim, Map<String, Object> fields, SideWrites writes, Create create, String action) {
    DocumentReference ref = records.document(claim.recordId());
    if (claim.writtenAt() != null) {
      WriteBatch batch = db.batch();
      batch.update(ref, fields, Precondition.updatedAt(Times.timestamp(claim.writtenAt())));
      if (create != null) {
        batch.create(create.ref(), create.fields());
      }
      writes.addTo(new FirestoreWrites(db, batch));
      try {
        List<WriteResult> results = await(batch.commit(), action + " the claim");
        serverClock.observe(results.get(0).getUpdateTime());
        return new Fenced(Times.instant(results.get(0).getUpdateTime()),
            create == null ? null : Times.instant(results.get(1).getUpdateTime()));
      } catch (RuntimeException e) {
        if (!StatusCodes.is(e, "FAILED_PRECONDITION") && !StatusCodes.is(e, "NOT_FOUND") && !mayHaveApplied(e)) {
          throw e;
        }
      }
    }
    if (!heldByToken(claim.recordId(), claim.token(), snapshot -> true, fields, writes, create, action)) {
      throw leaseLost(claim, action);
    }
    return new Fenced(null, null);
  }

  /**
   * In a transaction: when the record is still claimed with {@code token} and {@code also} holds of it, writes
   * {@code fields}, {@code create} and {@code writes}. Whether it wrote.
   */
  private boolean heldByToken(String recordId, long token, Predicate<DocumentSnapshot> also, Map<String, Object> fields,
      SideWrites writes, Create create, String action) {
    DocumentReference ref = records.document(recordId);
    try {
      return heldByToken(ref, token, also, fields, writes, create, action);
    } catch (RuntimeException e) {
      // As for a takeover: a commit applied whose answer was lost comes back as a closed transaction.
      if (e instanceof LeaseLost || !appliedAlready(recordId, fields, e)) {
        throw e;
      }
      return true;
    }
  }

  private boolean heldByToken(DocumentReference ref, long token, Predicate<DocumentSnapshot> also,
      Map<String, Object> fields, SideWrites writes, Create create, String action) {
    return await(db.runAsyncTransaction(tx -> ApiFutures.transform(tx.get(ref), snapshot -> {
      serverClock.observe(snapshot.getReadTime());
      if (snapshot.exists() && Objects.equals(snapshot.getString(NONCE), fields.get(NONCE))) {
        // This write was applied already: the one-write commit, or this transaction's own, lost its answer and was
        // resent (refused by its precondition) or is being run again.
        return true;
      }
      if (!snapshot.exists()
          || !RecordState.CLAIMED.name().equals(snapshot.getString(STATE))
          || !Objects.equals(snapshot.getLong(TOKEN), token)
          || !also.test(snapshot)) {
        return false;
      }
      tx.update(ref, fields);
      if (create != null) {
        tx.create(create.ref(), create.fields());
      }
      writes.addTo(new FirestoreWrites(db, tx));
      return true;
    }, MoreExecutors.directExecutor()), takeoverOptions), action + " the claim");
  }

  /**
   * A failure after which the commit may have been applied, its answer lost: the token transaction then finds out (the
   * record bears the write's nonce), or makes the write itself, which the first commit's update-time precondition
   * keeps from landing a second time should it still arrive.
   */
  private static boolean mayHaveApplied(RuntimeException e) {
    return e instanceof LedgerUnavailable || StatusCodes.is(e, "DEADLINE_EXCEEDED") || StatusCodes.is(e, "UNAVAILABLE")
        || StatusCodes.is(e, "INTERNAL");
  }

  static LeaseLost leaseLost(Claim claim, String action) {
    return new LeaseLost("cannot " + action + " " + claim.effect() + " for " + claim.key() + ": token "
        + claim.token() + " no longer holds the claim (taken over after its lease expired, or finished)");
  }

  private DocumentReference ref(IdempotencyKey key, String effect) {
    return records.document(recordId(key, effect));
  }

  private static LedgerRecord toRecord(DocumentSnapshot snapshot) {
    String state = snapshot.getString(STATE);
    Long token = snapshot.getLong(TOKEN);
    Long attempts = snapshot.getLong(ATTEMPTS);
    @SuppressWarnings("unchecked")
    Map<String, Object> outcome = (Map<String, Object>) snapshot.get(OUTCOME);
    return new LedgerRecord(
        snapshot.getId(),
        snapshot.getString(KEY),
        snapshot.getString(EFFECT),
        state == null ? RecordState.CLAIMED : RecordState.valueOf(state),
        token == null ? 0 : token,
        attempts == null ? 0 : attempts.intValue(),
        Times.instant(snapshot.getTimestamp(LEASE_EXPIRES_AT)),
        Times.instant(snapshot.getTimestamp(EXPIRE_AT)),
        snapshot.getString(FINGERPRINT),
        snapshot.getString(ERROR),
        outcome == null ? Map.of() : outcome,
        Times.instant(snapshot.getTimestamp(CREATED_AT)),
        Times.instant(snapshot.getTimestamp(UPDATED_AT)),
        Times.instant(snapshot.getReadTime()),
        snapshot.getString(RELEASED_BY) == null ? null : new LedgerRecord.Released(snapshot.getString(RELEASED_BY),
            Times.instant(snapshot.getTimestamp(RELEASED_AT)), snapshot.getString(RELEASE_REASON)),
        callsOf(snapshot.get(CALLS)),
        // Records written before tries were counted: every attempt may have run.
        snapshot.getLong(SPENT) == null ? (attempts == null ? 0 : attempts.intValue()) : snapshot.getLong(SPENT).intValue());
  }

  static String truncate(String text) {
    return truncate(text, MAX_ERROR_CHARS);
  }

  static String truncate(String text, int max) {
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

  /** Waits at most the configured RPC timeout, and translates what Firestore's failures mean here. */
  private <T> T await(ApiFuture<T> future, String what) {
    try {
      return future.get(config.rpcTimeout().toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      future.cancel(true);
      throw new LedgerUnavailable("Firestore did not answer within " + config.rpcTimeout() + " to " + what, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new LedgerUnavailable("interrupted while waiting for Firestore to " + what, e);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof LeaseLost lost) {
        throw lost;
      }
      if (StatusCodes.is(cause, "ABORTED")) {
        throw new LedgerUnavailable("Firestore aborted the call to " + what + " under contention"
            + " (a transaction gives up after " + config.takeoverAttempts() + " attempts)", cause);
      }
      if (cause instanceof RuntimeException runtime) {
        throw runtime;
      }
      throw new LedgerUnavailable("Firestore failed to " + what, cause);
    }
  }
}
