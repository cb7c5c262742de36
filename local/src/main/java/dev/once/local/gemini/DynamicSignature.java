package dev.once.local.gemini;

import java.util.Locale;

/**
 * How dynamic webhooks are signed: {@code JWT} as Google's documentation shows it (RS256 token in
 * {@code webhook-signature}), or {@code V1A} as live deliveries were reported to look (Standard Webhooks' Ed25519
 * scheme, googleapis/python-genai issue 2927). See local/README.md, "Dynamic webhooks".
 */
public enum DynamicSignature {
  JWT, V1A;

  /** {@code jwt} or {@code v1a}. */
  public static DynamicSignature parse(String text) {
    return switch (text.trim().toLowerCase(Locale.ROOT)) {
      case "jwt" -> JWT;
      case "v1a" -> V1A;
      default -> throw new IllegalArgumentException("a dynamic signature is jwt or v1a, not " + text);
    };
  }
}
