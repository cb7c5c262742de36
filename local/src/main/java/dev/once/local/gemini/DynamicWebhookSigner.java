package dev.once.local.gemini;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.KeyUse;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.jwk.gen.RSAKeyGenerator;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import java.net.URI;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Date;

/**
 * Signs dynamic (per-request) webhooks as the Gemini API documents them: the {@code webhook-signature} header holds
 * an RS256 JWT whose key the receiver finds by {@code kid} in a JWKS. The claims are the most defensive reading of
 * what the documentation leaves open (local/README.md, "Dynamic webhooks"): {@code iss} {@value #ISSUER},
 * {@code aud} the URI the delivery goes to, {@code iat}, {@code exp} {@link #LIFETIME} later, {@code jti} the
 * {@code webhook-id}, and {@value #BODY_HASH_CLAIM}, the base64 SHA-256 of the exact body bytes, which binds the
 * token to the body. Each stand-in generates its own key at start. Public so tests elsewhere can sign deliveries.
 */
public final class DynamicWebhookSigner {
  /** The issuer the stand-in's tokens carry: the origin of Google's JWKS URL (not documented; see the README). */
  public static final String ISSUER = "https://generativelanguage.googleapis.com";
  public static final String BODY_HASH_CLAIM = "sha256";
  public static final Duration LIFETIME = Duration.ofMinutes(5);

  private final RSAKey key;

  private DynamicWebhookSigner(RSAKey key) {
    this.key = key;
  }

  /** A fresh 2048-bit RSA key with a random {@code kid}. */
  public static DynamicWebhookSigner generate() {
    try {
      return new DynamicWebhookSigner(new RSAKeyGenerator(2048).keyUse(KeyUse.SIGNATURE).algorithm(JWSAlgorithm.RS256)
          .keyIDFromThumbprint(true).generate());
    } catch (JOSEException e) {
      throw new IllegalStateException("every JDK can make an RSA key", e);
    }
  }

  public String keyId() {
    return key.getKeyID();
  }

  /** The public half, as a JWKS document. */
  public JWKSet publicKeys() {
    return new JWKSet(key.toPublicJWK());
  }

  /** The {@code webhook-signature} value for one delivery attempt of {@code body} to {@code target}. */
  public String sign(URI target, String webhookId, Instant issuedAt, byte[] body) {
    JWTClaimsSet claims = new JWTClaimsSet.Builder()
        .issuer(ISSUER)
        .audience(target.toString())
        .issueTime(Date.from(issuedAt))
        .expirationTime(Date.from(issuedAt.plus(LIFETIME)))
        .jwtID(webhookId)
        .claim(BODY_HASH_CLAIM, bodyHash(body))
        .build();
    SignedJWT jwt = new SignedJWT(
        new JWSHeader.Builder(JWSAlgorithm.RS256).keyID(key.getKeyID()).type(JOSEObjectType.JWT).build(), claims);
    try {
      jwt.sign(new RSASSASigner(key));
    } catch (JOSEException e) {
      throw new IllegalStateException("signing with a fresh RSA key failed", e);
    }
    return jwt.serialize();
  }

  /** Base64 (standard alphabet, padded) of the SHA-256 of {@code body}. */
  public static String bodyHash(byte[] body) {
    try {
      return Base64.getEncoder().encodeToString(MessageDigest.getInstance("SHA-256").digest(body));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK has SHA-256", e);
    }
  }
}
