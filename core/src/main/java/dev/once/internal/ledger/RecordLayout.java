package dev.once.internal.ledger;

import dev.once.key.IdempotencyKey;
import dev.once.key.Sha256;
import dev.once.ledger.Call;
import dev.once.ledger.Claim;
import dev.once.ledger.ClaimOptions;
import dev.once.ledger.DocumentWrites;
import dev.once.ledger.LedgerRecord;
import dev.once.ledger.RecordFields;
import dev.once.ledger.RecordState;
import dev.once.ledger.spi.RecordStore.RecordWrite;
import dev.once.ledger.spi.RecordStore.Snapshot;
import dev.once.observe.ForeignText;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Pattern;

/**
 * The record layout, and the only code that knows it (with {@link Calls}, the tries as stored): the record id of
 * (key, effect), the fields a claim is created with, a record read back from its fields, and the nonce every write
 * carries.
 */
public final class RecordLayout {
  /** The rule for effect names: they are part of the record id and of log labels. */
  public static final Pattern EFFECT_NAME = Pattern.compile("[a-z][a-z0-9._-]{0,63}");
  static final int MAX_ERROR_CHARS = 2000;
  static final int MAX_CALL_ERROR_CHARS = 300;

  private RecordLayout() {}

  /** The record id of (key, effect): a hash, because keys hold '/' and arbitrary user text. */
  public static String recordId(IdempotencyKey key, String effect) {
    if (effect == null || !EFFECT_NAME.matcher(effect).matches()) {
      throw new IllegalArgumentException("effect name must match " + EFFECT_NAME + ", got " + effect);
    }
    // The effect name cannot hold a newline, so the pair is unambiguous.
    return Sha256.hex(effect + "\n" + key.value());
  }

  /** A fresh id for one write (and every run of its transaction's body). */
  static String nonce() {
    return UUID.randomUUID().toString();
  }

  /** Whether the record was last written by the write that carried {@code nonce}. */
  static boolean bears(Snapshot snapshot, String nonce) {
    return snapshot.exists() && nonce != null && nonce.equals(snapshot.fields().get(RecordFields.NONCE));
  }

  /** The claim a new record gives its creator: token 1, its first try running. */
  static Claim firstClaim(IdempotencyKey key, String effect, String id, Instant now, Duration lease,
      Instant writtenAt) {
    return new Claim(key, effect, id, 1, 1, now.plus(lease), writtenAt, lease,
        List.of(new Call(1, now, Call.Outcome.RUNNING, null)), 1, false, null);
  }

  /** The creation of record {@code id}: claimed by its first try. */
  static RecordWrite newClaim(String id, IdempotencyKey key, String effect, ClaimOptions options, Instant now,
      Instant leaseExpiresAt, Instant expireAt, String nonce) {
    Map<String, Object> fields = new HashMap<>();
    fields.put(RecordFields.NONCE, nonce);
    fields.put(RecordFields.KEY, key.value());
    fields.put(RecordFields.EFFECT, effect);
    fields.put(RecordFields.STATE, RecordState.CLAIMED.name());
    fields.put(RecordFields.TOKEN, 1L);
    fields.put(RecordFields.ATTEMPTS, 1L);
    fields.put(RecordFields.SPENT, 1L);
    fields.put(RecordFields.CALLS, Calls.stored(List.of(new Call(1, now, Call.Outcome.RUNNING, null))));
    fields.put(RecordFields.LEASE_EXPIRES_AT, leaseExpiresAt);
    // An abandoned claim is cleaned up by the TTL policy too.
    fields.put(RecordFields.EXPIRE_AT, expireAt);
    fields.put(RecordFields.FINGERPRINT, options.fingerprint());
    fields.put(RecordFields.ERROR, null);
    fields.put(RecordFields.CREATED_AT, DocumentWrites.serverTime());
    fields.put(RecordFields.UPDATED_AT, DocumentWrites.serverTime());
    return RecordWrite.create(id, fields);
  }

  /**
   * The creation of record {@code id} already done with {@code outcome} ({@link dev.once.ledger.Ledger#settle}): one
   * try, done at once, nothing spent, its lease over.
   */
  static RecordWrite newSettled(String id, IdempotencyKey key, String effect, Map<String, Object> outcome,
      Instant now, Instant expireAt, String nonce) {
    Map<String, Object> fields = new HashMap<>();
    fields.put(RecordFields.NONCE, nonce);
    fields.put(RecordFields.KEY, key.value());
    fields.put(RecordFields.EFFECT, effect);
    fields.put(RecordFields.STATE, RecordState.DONE.name());
    fields.put(RecordFields.OUTCOME, outcome == null ? Map.of() : outcome);
    fields.put(RecordFields.TOKEN, 1L);
    fields.put(RecordFields.ATTEMPTS, 1L);
    fields.put(RecordFields.SPENT, 0L);
    fields.put(RecordFields.CALLS, Calls.stored(List.of(new Call(1, now, Call.Outcome.DONE, null))));
    fields.put(RecordFields.LEASE_EXPIRES_AT, now);
    fields.put(RecordFields.EXPIRE_AT, expireAt);
    fields.put(RecordFields.FINGERPRINT, null);
    fields.put(RecordFields.ERROR, null);
    fields.put(RecordFields.CREATED_AT, DocumentWrites.serverTime());
    fields.put(RecordFields.UPDATED_AT, DocumentWrites.serverTime());
    fields.put(RecordFields.FINISHED_AT, DocumentWrites.serverTime());
    return RecordWrite.create(id, fields);
  }

  /**
   * The claim a takeover (or a claim made inside its transaction) wrote, read back from the record by a run of its
   * transaction's body after the commit's answer was lost; fenced by its token, as every takeover's claim.
   */
  static Claim asWritten(LedgerRecord record, IdempotencyKey key, String effect, Duration lease) {
    List<Call> calls = record.calls();
    // A takeover handed over exhausted records no try: its last one is not this holder's running one.
    boolean exhausted = calls.isEmpty() || calls.get(calls.size() - 1).outcome() != Call.Outcome.RUNNING
        || calls.get(calls.size() - 1).number() != record.attempts();
    return new Claim(key, effect, record.recordId(), record.token(), record.attempts(), record.leaseExpiresAt(), null,
        lease, calls, record.spent(), exhausted, record.error(), record.generation());
  }

  static LedgerRecord record(Snapshot snapshot) {
    Map<String, Object> fields = snapshot.fields();
    Object state = fields.get(RecordFields.STATE);
    Long token = number(fields.get(RecordFields.TOKEN));
    Long attempts = number(fields.get(RecordFields.ATTEMPTS));
    Long spent = number(fields.get(RecordFields.SPENT));
    @SuppressWarnings("unchecked")
    Map<String, Object> outcome = (Map<String, Object>) fields.get(RecordFields.OUTCOME);
    return new LedgerRecord(
        snapshot.id(),
        (String) fields.get(RecordFields.KEY),
        (String) fields.get(RecordFields.EFFECT),
        state == null ? RecordState.CLAIMED : RecordState.valueOf((String) state),
        token == null ? 0 : token,
        attempts == null ? 0 : attempts.intValue(),
        (Instant) fields.get(RecordFields.LEASE_EXPIRES_AT),
        (Instant) fields.get(RecordFields.EXPIRE_AT),
        (String) fields.get(RecordFields.FINGERPRINT),
        (String) fields.get(RecordFields.ERROR),
        outcome == null ? Map.of() : outcome,
        (Instant) fields.get(RecordFields.CREATED_AT),
        (Instant) fields.get(RecordFields.UPDATED_AT),
        snapshot.readTime(),
        fields.get(RecordFields.RELEASED_BY) == null ? null
            : new LedgerRecord.Released((String) fields.get(RecordFields.RELEASED_BY),
                (Instant) fields.get(RecordFields.RELEASED_AT), (String) fields.get(RecordFields.RELEASE_REASON)),
        Calls.read(fields.get(RecordFields.CALLS)),
        // Records written before tries were counted: every attempt may have run.
        spent == null ? (attempts == null ? 0 : attempts.intValue()) : spent.intValue(),
        RecordFields.gaveUp(fields.get(RecordFields.GAVE_UP), (String) fields.get(RecordFields.ERROR)),
        number(fields.get(RecordFields.GENERATION)) == null ? 1
            : number(fields.get(RecordFields.GENERATION)).intValue(),
        History.read(fields.get(RecordFields.HISTORY)));
  }

  /**
   * The fields that move a finished record to its next generation (an operator's deliberate re-run): how the run
   * {@code ended} joins its history (the latest {@link History#KEPT}), and the record becomes a claim with no try whose
   * lease ended at {@code now}, so the next delivery takes it over as after a release.
   */
  static Map<String, Object> nextGeneration(LedgerRecord record, LedgerRecord.Invalidated ended, Instant now,
      Instant expireAt, String nonce) {
    List<LedgerRecord.Invalidated> history = new ArrayList<>(record.history());
    history.add(ended);
    Map<String, Object> fields = new HashMap<>();
    fields.put(RecordFields.STATE, RecordState.CLAIMED.name());
    fields.put(RecordFields.GENERATION, (long) ended.generation() + 1);
    fields.put(RecordFields.HISTORY, History.stored(history.subList(Math.max(0, history.size() - History.KEPT),
        history.size())));
    fields.put(RecordFields.TOKEN, record.token() + 1);
    fields.put(RecordFields.ATTEMPTS, 0L);
    fields.put(RecordFields.SPENT, 0L);
    fields.put(RecordFields.CALLS, List.of());
    fields.put(RecordFields.LEASE_EXPIRES_AT, now);
    for (String over : List.of(RecordFields.OUTCOME, RecordFields.ERROR, RecordFields.GAVE_UP, RecordFields.FINISHED_AT,
        RecordFields.RELEASED_BY, RecordFields.RELEASED_AT, RecordFields.RELEASE_REASON)) {
      fields.put(over, null);
    }
    fields.put(RecordFields.UPDATED_AT, DocumentWrites.serverTime());
    fields.put(RecordFields.EXPIRE_AT, expireAt);
    fields.put(RecordFields.NONCE, nonce);
    return fields;
  }

  static Long number(Object value) {
    return value instanceof Number n ? n.longValue() : null;
  }

  static String truncate(String text, int max) {
    return ForeignText.cut(text, max);
  }
}
