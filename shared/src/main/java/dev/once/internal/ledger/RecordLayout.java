package dev.once.internal.ledger;

import static dev.once.ledger.RecordFields.ATTEMPTS;
import static dev.once.ledger.RecordFields.CALLS;
import static dev.once.ledger.RecordFields.CREATED_AT;
import static dev.once.ledger.RecordFields.EFFECT;
import static dev.once.ledger.RecordFields.ERROR;
import static dev.once.ledger.RecordFields.EXPIRE_AT;
import static dev.once.ledger.RecordFields.FINGERPRINT;
import static dev.once.ledger.RecordFields.GAVE_UP;
import static dev.once.ledger.RecordFields.KEY;
import static dev.once.ledger.RecordFields.LEASE_EXPIRES_AT;
import static dev.once.ledger.RecordFields.NONCE;
import static dev.once.ledger.RecordFields.OUTCOME;
import static dev.once.ledger.RecordFields.RELEASED_AT;
import static dev.once.ledger.RecordFields.RELEASED_BY;
import static dev.once.ledger.RecordFields.RELEASE_REASON;
import static dev.once.ledger.RecordFields.SPENT;
import static dev.once.ledger.RecordFields.STATE;
import static dev.once.ledger.RecordFields.TOKEN;
import static dev.once.ledger.RecordFields.UPDATED_AT;

import com.google.cloud.Timestamp;
import dev.once.key.IdempotencyKey;
import dev.once.key.Sha256;
import dev.once.ledger.Call;
import dev.once.ledger.Claim;
import dev.once.ledger.ClaimOptions;
import dev.once.ledger.DocumentWrites;
import dev.once.ledger.LedgerRecord;
import dev.once.ledger.RecordFields;
import dev.once.ledger.RecordState;
import dev.once.ledger.RecordStore.Snapshot;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Pattern;

/**
 * The record layout, and the only code that knows it: the record id of (key, effect), the fields a claim is created
 * with, a record read back from its fields, the tries as stored, and the nonce every write carries.
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
    return snapshot.exists() && nonce != null && nonce.equals(snapshot.fields().get(NONCE));
  }

  /** The claim a new record gives its creator: token 1, its first try running. */
  static Claim firstClaim(IdempotencyKey key, String effect, String id, Instant now, Duration lease,
      Instant writtenAt) {
    return new Claim(key, effect, id, 1, 1, now.plus(lease), writtenAt, lease,
        List.of(new Call(1, now, Call.Outcome.RUNNING, null)), 1, false, null);
  }

  /** The fields a record is created with: claimed by its first try. */
  static Map<String, Object> newClaim(IdempotencyKey key, String effect, ClaimOptions options, Instant now,
      Instant leaseExpiresAt, Instant expireAt, String nonce) {
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
    fields.put(EXPIRE_AT, expireAt);
    fields.put(FINGERPRINT, options.fingerprint());
    fields.put(ERROR, null);
    fields.put(CREATED_AT, DocumentWrites.serverTime());
    fields.put(UPDATED_AT, DocumentWrites.serverTime());
    return fields;
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
        lease, calls, record.spent(), exhausted, record.error());
  }

  static LedgerRecord record(Snapshot snapshot) {
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
        RecordFields.gaveUp(fields.get(GAVE_UP), (String) fields.get(ERROR)));
  }

  static Long number(Object value) {
    return value instanceof Number n ? n.longValue() : null;
  }

  static String truncate(String text, int max) {
    if (text == null) {
      return null;
    }
    return text.length() <= max ? text : text.substring(0, max) + "…";
  }

  /** The tries as stored: a list of maps, oldest first, each try's outcome under its lower-case name. */
  static List<Map<String, Object>> calls(List<Call> calls) {
    return calls.stream().map(RecordLayout::call).toList();
  }

  public static Map<String, Object> call(Call call) {
    Map<String, Object> fields = new HashMap<>();
    fields.put("number", (long) call.number());
    fields.put("at", Times.timestamp(call.at()));
    fields.put("outcome", call.outcome().stored());
    fields.put("error", call.error());
    return fields;
  }

  public static Call call(Map<?, ?> stored) {
    return new Call(stored.get("number") instanceof Number n ? n.intValue() : 0,
        stored.get("at") instanceof Timestamp time ? Times.instant(time) : null,
        Call.Outcome.ofStored(stored.get("outcome")),
        stored.get("error") == null ? null : String.valueOf(stored.get("error")));
  }

  private static List<Call> callsOf(Object stored) {
    if (!(stored instanceof List<?> list)) {
      return List.of();
    }
    List<Call> calls = new ArrayList<>();
    for (Object item : list) {
      if (item instanceof Map<?, ?> call) {
        calls.add(call(call));
      }
    }
    return calls;
  }
}
