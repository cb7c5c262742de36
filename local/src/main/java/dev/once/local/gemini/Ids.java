package dev.once.local.gemini;

import java.security.SecureRandom;

/** Resource ids shaped like the API's: lower-case letters and digits. */
final class Ids {
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final char[] ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789".toCharArray();

  private Ids() {}

  static String random(int length) {
    char[] id = new char[length];
    for (int i = 0; i < length; i++) {
      id[i] = ALPHABET[RANDOM.nextInt(ALPHABET.length)];
    }
    return new String(id);
  }
}
