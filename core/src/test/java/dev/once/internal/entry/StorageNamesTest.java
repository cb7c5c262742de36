package dev.once.internal.entry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import org.junit.jupiter.api.Test;

class StorageNamesTest {
  private static final String FACE = "\uD83D\uDE00"; // one character outside the BMP: two UTF-16 chars

  @Test
  void aRefusedName_isQuotedWhole_upToSixtyCharacters_andCutAfterThem() {
    assertEquals("\"" + FACE.repeat(40) + "\" is not a Cloud Storage bucket name",
        StorageNames.refusal(FACE.repeat(40), "a.pdf"), "40 characters, 80 chars of UTF-16: nothing was cut");
    assertEquals("\"" + "B".repeat(60) + "…\" is not a Cloud Storage bucket name",
        StorageNames.refusal("B".repeat(61), "a.pdf"));
    assertEquals("\"" + FACE.repeat(60) + "…\" is not a Cloud Storage bucket name",
        StorageNames.refusal(FACE.repeat(61), "a.pdf"));
  }

  @Test
  void aNameCloudStorageAllows_isNotRefused() {
    assertNull(StorageNames.refusal("invoices-bucket", "inbox/" + FACE + ".pdf"));
  }
}
