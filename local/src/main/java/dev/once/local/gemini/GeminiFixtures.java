package dev.once.local.gemini;

import com.fasterxml.jackson.databind.JsonNode;
import dev.once.wire.http.Json;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * What Google's Gemini API answers, as users captured it (the sources: {@code fixtures/README.md} beside this class):
 * what the stand-in's answers are held to, and what the functions must read as it comes.
 */
public final class GeminiFixtures {
  private GeminiFixtures() {}

  /** The fixture's text, e.g. {@code error-404-adk-docs-pr1840.json}. */
  public static String text(String name) {
    try (InputStream in = GeminiFixtures.class.getResourceAsStream("fixtures/" + name)) {
      if (in == null) {
        throw new IllegalArgumentException("no fixture " + name + " (see dev/once/local/gemini/fixtures/README.md)");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  public static JsonNode json(String name) {
    return Json.parseTrusted(text(name));
  }
}
