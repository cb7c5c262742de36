package dev.once.key;

import java.nio.charset.StandardCharsets;

/**
 * The canonical text naming one business event, such as {@code gcs:inbox/a.pdf#17}. Keys carry user text
 * (object names), so they are never used raw as a Firestore path: the ledger stores them under a hash.
 *
 * <p>Limits: not blank, at most {@value #MAX_BYTES} bytes of UTF-8 (Firestore indexes string values up to
 * 1,500 bytes; a key must stay whole to be compared), and well-formed Unicode — a lone surrogate would be
 * replaced while encoding, and two different keys could then share one record.
 */
public record IdempotencyKey(String value) {
  public static final int MAX_BYTES = 1024;
  /** What a re-run's key ends with, before its number ({@link #rerun}). */
  public static final String RERUN = "/rerun-";
  /** Hex digits of {@link #logHash()}: 64 bits, no two keys of one deployment share them. */
  public static final int LOG_HASH_CHARS = 16;

  public IdempotencyKey {
    if (value == null || value.isBlank()) {
      throw new InvalidKey("idempotency key is empty");
    }
    if (!isWellFormed(value)) {
      throw new InvalidKey("idempotency key is not well-formed Unicode (lone surrogate): " + preview(value));
    }
    int bytes = value.getBytes(StandardCharsets.UTF_8).length;
    if (bytes > MAX_BYTES) {
      throw new InvalidKey(
          "idempotency key is " + bytes + " bytes of UTF-8, over the limit of " + MAX_BYTES + ": " + preview(value));
    }
  }

  public static IdempotencyKey of(String value) {
    return new IdempotencyKey(value);
  }

  /**
   * {@code kind:id}, such as {@code welcome:u-42}: the key of the {@code kind} of event about {@code id}, which must
   * be there ({@link InvalidKey} when it is null or blank: an event that names no user has no key).
   */
  public static IdempotencyKey of(String kind, String id) {
    if (kind == null || kind.isBlank() || kind.contains(":")) {
      throw new IllegalArgumentException("a key's kind is a word without ':', got " + kind);
    }
    if (id == null || id.isBlank()) {
      throw new InvalidKey("the event names no " + kind + " id");
    }
    return new IdempotencyKey(kind + ":" + id.strip());
  }

  /**
   * The key what run {@code generation} of an effect makes visible outside carries: this key on the first run, and
   * {@code KEY/rerun-N} on run N, after an operator invalidated the earlier runs on purpose, so that a receiver sees
   * a new event and not a copy of the old one. A key too long for the suffix gives its hash instead
   * ({@code sha256:HASH/rerun-N}).
   */
  public IdempotencyKey rerun(int generation) {
    if (generation <= 1) {
      return this;
    }
    String suffix = RERUN + generation;
    return value.getBytes(StandardCharsets.UTF_8).length + suffix.length() <= MAX_BYTES ? of(value + suffix)
        : of("sha256:" + documentId() + suffix);
  }

  /**
   * The id of documents that belong to this event (its analysis, its billing entry): the SHA-256 of the key,
   * so a second writer for the same event overwrites the same document instead of adding one.
   */
  public String documentId() {
    return Sha256.hex(value);
  }

  /**
   * How log lines name this key: the first {@value #LOG_HASH_CHARS} hex digits of its SHA-256, which begin its
   * {@link #documentId()}. Keys hold object names and producers' ids, which may name people; logs are read by more
   * people, and kept longer, than the ledger is. The same key always gives the same hash, so one event's lines can
   * be followed, and {@code once inspect HASH} finds the key in Firestore.
   */
  public String logHash() {
    return logHash(value);
  }

  /** {@link #logHash()} of a key's text. */
  public static String logHash(String value) {
    return Sha256.hex(value).substring(0, LOG_HASH_CHARS);
  }

  private static boolean isWellFormed(String s) {
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (Character.isHighSurrogate(c)) {
        if (i + 1 >= s.length() || !Character.isLowSurrogate(s.charAt(i + 1))) {
          return false;
        }
        i++;
      } else if (Character.isLowSurrogate(c)) {
        return false;
      }
    }
    return true;
  }

  /** A short, printable rendering for error messages and logs (keys may hold control characters). */
  public static String preview(String s) {
    StringBuilder out = new StringBuilder();
    s.codePoints().limit(80).forEach(cp -> {
      if (Character.isISOControl(cp) || Character.getType(cp) == Character.SURROGATE) {
        out.append(String.format("\\u%04x", cp));
      } else {
        out.appendCodePoint(cp);
      }
    });
    if (s.codePointCount(0, s.length()) > 80) {
      out.append("…");
    }
    return '"' + out.toString() + '"';
  }

  @Override
  public String toString() {
    return value;
  }
}
