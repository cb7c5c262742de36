package dev.once.gemini;

import com.nimbusds.jose.jwk.Curve;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.JWKMatcher;
import com.nimbusds.jose.jwk.JWKSelector;
import com.nimbusds.jose.jwk.KeyType;
import com.nimbusds.jose.jwk.OctetKeyPair;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PublicKey;
import java.security.Signature;
import java.security.spec.X509EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;

/**
 * Standard Webhooks' asymmetric scheme: {@code webhook-signature} holds blank-separated {@code v1a,<base64>}
 * entries, each an Ed25519 signature of {@code "<webhook-id>.<webhook-timestamp>.<raw body>"}; the public keys
 * are the Ed25519 ({@code kty} OKP) keys of a JWKS. What live dynamic Gemini webhooks were reported to carry
 * (googleapis/python-genai issue 2927) instead of the documented JWT.
 */
final class V1aSignatures {
  static final JWKSelector ED25519_KEYS =
      new JWKSelector(new JWKMatcher.Builder().keyType(KeyType.OKP).curve(Curve.Ed25519).build());
  private static final String PREFIX = "v1a,";
  /** Google signs with one key, two while it rotates them: more entries than this are not a rotation. */
  static final int MAX_ENTRIES = 4;
  /**
   * The most Ed25519 checks one request may cost (each over up to 1 MiB), the retry after a refetch of the keys
   * included: an unsigned request must not make the public function do work a real delivery never needs.
   */
  static final int MAX_CHECKS = 8;
  /** The DER prefix of an X.509 Ed25519 public key; the raw 32-byte key follows it. */
  private static final byte[] X509_PREFIX = HexFormat.of().parseHex("302a300506032b6570032100");

  private V1aSignatures() {}

  /** True when the header carries at least one {@code v1a,} entry: this scheme, not a JWT. */
  static boolean present(String header) {
    return header.startsWith(PREFIX) || header.contains(" " + PREFIX);
  }

  /** The decoded signatures of the {@code v1a,} entries; malformed entries are left out. */
  static List<byte[]> parse(String header) throws InvalidSignature {
    String[] entries = header.strip().split("\\s+");
    if (entries.length > MAX_ENTRIES) {
      throw new InvalidSignature("too many signatures");
    }
    List<byte[]> signatures = new ArrayList<>();
    for (String entry : entries) {
      if (entry.startsWith(PREFIX)) {
        try {
          signatures.add(Base64.getDecoder().decode(entry.substring(PREFIX.length())));
        } catch (IllegalArgumentException notBase64) {
          // does not match anything
        }
      }
    }
    return signatures;
  }

  /** The checks one request may still make: {@link #MAX_CHECKS} in all, across every try of the keys. */
  static final class Budget {
    private int left = MAX_CHECKS;

    boolean spend() {
      return left-- > 0;
    }
  }

  /**
   * Whether any signature verifies {@code "<webhook-id>.<webhook-timestamp>.<body>"} with any of {@code keys}
   * (Ed25519 JWKs; others are skipped), within the request's {@code budget} of checks (a signature of 64 bytes only:
   * any other length cannot verify and costs nothing).
   */
  static boolean anyVerifies(List<JWK> keys, WebhookMessage message, byte[] body, List<byte[]> signatures,
      Budget budget) throws InvalidSignature {
    for (JWK jwk : keys) {
      PublicKey key = publicKey(jwk);
      if (key == null) {
        continue;
      }
      for (byte[] signature : signatures) {
        if (signature.length != 64) {
          continue;
        }
        if (!budget.spend()) {
          throw new InvalidSignature("more than " + MAX_CHECKS + " signature checks");
        }
        if (verifies(key, message.signedPrefix(), body, signature)) {
          return true;
        }
      }
    }
    return false;
  }

  private static boolean verifies(PublicKey key, byte[] prefix, byte[] body, byte[] signature) {
    try {
      Signature verifier = Signature.getInstance("Ed25519");
      verifier.initVerify(key);
      verifier.update(prefix);
      verifier.update(body);
      return verifier.verify(signature);
    } catch (GeneralSecurityException malformed) {
      return false;
    }
  }

  private static PublicKey publicKey(JWK jwk) {
    if (!(jwk instanceof OctetKeyPair okp) || !Curve.Ed25519.equals(okp.getCurve())) {
      return null;
    }
    byte[] x = okp.getX().decode();
    if (x.length != 32) {
      return null;
    }
    byte[] encoded = new byte[X509_PREFIX.length + x.length];
    System.arraycopy(X509_PREFIX, 0, encoded, 0, X509_PREFIX.length);
    System.arraycopy(x, 0, encoded, X509_PREFIX.length, x.length);
    try {
      return KeyFactory.getInstance("Ed25519").generatePublic(new X509EncodedKeySpec(encoded));
    } catch (GeneralSecurityException e) {
      return null;
    }
  }
}
