package dev.once.internal.entry;

import dev.once.observe.ForeignText;
import java.nio.charset.StandardCharsets;
import java.util.regex.Pattern;

/**
 * What Cloud Storage itself allows as bucket and object names: an event naming anything else was not sent by
 * Cloud Storage, and is refused before any read or write. Object names are also refused when they hold control
 * characters, which GCS discourages and no ordinary upload needs: they are how hostile names smuggle line breaks
 * into logs and headers.
 */
public final class StorageNames {
  private static final Pattern BUCKET = Pattern.compile("[a-z0-9][a-z0-9._-]{1,220}[a-z0-9]");
  private static final int MAX_NAME_BYTES = 1024;

  private StorageNames() {}

  /** Why the pair cannot come from Cloud Storage, or null when it can. */
  public static String refusal(String bucket, String name) {
    if (!BUCKET.matcher(bucket).matches() || bucket.contains("..")) {
      return "\"" + shorten(bucket) + "\" is not a Cloud Storage bucket name";
    }
    if (name.getBytes(StandardCharsets.UTF_8).length > MAX_NAME_BYTES) {
      return "the object name is longer than " + MAX_NAME_BYTES + " bytes";
    }
    if (name.equals(".") || name.equals("..") || name.startsWith(".well-known/acme-challenge/")) {
      return "\"" + shorten(name) + "\" is not a Cloud Storage object name";
    }
    for (int i = 0; i < name.length(); i++) {
      char c = name.charAt(i);
      if (Character.isISOControl(c)) {
        return "the object name holds a control character (U+" + String.format("%04X", (int) c) + ")";
      }
      if (Character.isSurrogate(c)
          && !(Character.isHighSurrogate(c) && i + 1 < name.length() && Character.isLowSurrogate(name.charAt(++i)))) {
        return "the object name is not well-formed Unicode";
      }
    }
    return null;
  }

  private static String shorten(String text) {
    String visible = text.codePoints().limit(60)
        .map(cp -> Character.isISOControl(cp) ? '?' : cp)
        .collect(StringBuilder::new, StringBuilder::appendCodePoint, StringBuilder::append).toString();
    return text.codePointCount(0, text.length()) > 60 ? visible + ForeignText.CUT : visible;
  }
}
