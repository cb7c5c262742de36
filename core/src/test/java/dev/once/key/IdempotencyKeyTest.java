package dev.once.key;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class IdempotencyKeyTest {
  @ParameterizedTest
  @ValueSource(strings = {"", " ", "\t\n"})
  void blankKey_isRejected(String value) {
    InvalidKey e = assertThrows(InvalidKey.class, () -> IdempotencyKey.of(value));
    assertTrue(e.getMessage().contains("empty"), e.getMessage());
  }

  @Test
  void nullKey_isRejected() {
    assertThrows(InvalidKey.class, () -> IdempotencyKey.of(null));
  }

  @Test
  void keyOf1024Bytes_isAccepted_and1025_isRejectedWithItsSize() {
    assertEquals(1024, IdempotencyKey.of("k".repeat(1024)).value().length());
    InvalidKey e = assertThrows(InvalidKey.class, () -> IdempotencyKey.of("k".repeat(1025)));
    assertTrue(e.getMessage().contains("1025 bytes"), e.getMessage());
  }

  @Test
  void limitCountsUtf8Bytes_notCharacters() {
    String threeByteChars = "€".repeat(341); // 1,023 bytes
    IdempotencyKey.of(threeByteChars);
    assertThrows(InvalidKey.class, () -> IdempotencyKey.of(threeByteChars + "€"));
  }

  @Test
  void loneSurrogate_isRejected_becauseUtf8WouldSilentlyReplaceIt() {
    assertThrows(InvalidKey.class, () -> IdempotencyKey.of("gcs:b/a\uD800b#1"));
    assertThrows(InvalidKey.class, () -> IdempotencyKey.of("gcs:b/a\uDC00#1"));
    assertEquals("gcs:b/😀#1", IdempotencyKey.of("gcs:b/😀#1").value());
  }

  @Test
  void errorMessage_rendersControlCharactersVisibly() {
    InvalidKey e = assertThrows(InvalidKey.class, () -> IdempotencyKey.of("\u0001" + "x".repeat(2000)));
    assertTrue(e.getMessage().contains("\\u0001"), e.getMessage());
    assertTrue(e.getMessage().length() < 300, "message is bounded: " + e.getMessage().length());
  }

  @Test
  void storageKey_isBucketNameAndGeneration() {
    assertEquals("gcs:inbox/invoices/a.pdf#1700000000000001",
        StorageObjectKeys.of("inbox", "invoices/a.pdf", "1700000000000001").value());
    assertEquals(StorageObjectKeys.of("b", "n", 7L), StorageObjectKeys.of("b", "n", " 7 "));
  }

  @Test
  void storageKey_newGeneration_isNewKey() {
    assertTrue(!StorageObjectKeys.of("b", "n", 1L).equals(StorageObjectKeys.of("b", "n", 2L)));
  }

  @ParameterizedTest
  @ValueSource(strings = {"", " ", "0", "-3", "abc", "1e5"})
  void storageKey_withoutUsableGeneration_isRejected(String generation) {
    assertThrows(InvalidKey.class, () -> StorageObjectKeys.of("b", "n", generation));
  }

  @Test
  void storageKey_withoutBucketOrName_isRejected() {
    assertThrows(InvalidKey.class, () -> StorageObjectKeys.of("", "n", 1L));
    assertThrows(InvalidKey.class, () -> StorageObjectKeys.of("b", "", 1L));
    assertThrows(InvalidKey.class, () -> StorageObjectKeys.of("b", null, "1"));
  }

  @Test
  void pubSubKey_prefersProducerAttribute_elseMessageId() {
    assertEquals("gcs:b/n#1", PubSubMessageKeys.of(Map.of("idempotency_key", "gcs:b/n#1"), "42").value());
    assertEquals("pubsub:42", PubSubMessageKeys.of(Map.of("other", "x"), "42").value());
    assertEquals("pubsub:42", PubSubMessageKeys.of(Map.of("idempotency_key", "  "), "42").value());
    assertEquals("pubsub:42", PubSubMessageKeys.of(null, "42").value());
  }

  @Test
  void pubSubKey_withNeitherAttributeNorId_isRejected() {
    assertThrows(InvalidKey.class, () -> PubSubMessageKeys.of(Map.of(), " "));
  }

  @Test
  void aKindAndAnId_makeAKey_andNoIdIsNoKey() {
    assertEquals("welcome:u-42", IdempotencyKey.of("welcome", " u-42 ").value());
    assertThrows(InvalidKey.class, () -> IdempotencyKey.of("welcome", null));
    assertThrows(InvalidKey.class, () -> IdempotencyKey.of("welcome", " "));
    assertThrows(IllegalArgumentException.class, () -> IdempotencyKey.of("wel:come", "u-42"));
  }

  /** A deliberate re-run's key: the key itself on the first run, KEY/rerun-N after, its hash when too long for it. */
  @Test
  void rerunKey_isTheKeyOnTheFirstRun_thenSuffixed_orHashedWhenTooLong() {
    IdempotencyKey key = IdempotencyKey.of("gcs:inbox/a.pdf#17");
    assertEquals(key, key.rerun(1));
    assertEquals("gcs:inbox/a.pdf#17/rerun-2", key.rerun(2).value());
    IdempotencyKey longest = IdempotencyKey.of("x".repeat(IdempotencyKey.MAX_BYTES));
    assertEquals("sha256:" + longest.documentId() + "/rerun-3", longest.rerun(3).value());
  }

  @Test
  void theLogHash_beginsTheDocumentId_andDiffersForAnotherName() {
    IdempotencyKey key = IdempotencyKey.of("gcs:inbox/Jane Doe invoice.pdf#17");
    // SHA-256 of the key's UTF-8, computed apart: printf '%s' 'gcs:inbox/Jane Doe invoice.pdf#17' | sha256sum
    assertEquals("32f2b567f2e01025", key.logHash());
    assertEquals(key.documentId().substring(0, 16), key.logHash());
    assertEquals(16, key.logHash().length());
    assertTrue(key.logHash().matches("[0-9a-f]{16}"));
    assertTrue(!key.logHash().equals(IdempotencyKey.logHash("gcs:inbox/John Doe invoice.pdf#17")));
  }
}
