package dev.once.local.gemini;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.JWSHeader;
import com.nimbusds.jose.crypto.RSASSASigner;
import com.nimbusds.jose.jwk.Curve;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.KeyUse;
import com.nimbusds.jose.jwk.OctetKeyPair;
import com.nimbusds.jose.jwk.RSAKey;
import com.nimbusds.jose.jwk.gen.RSAKeyGenerator;
import com.nimbusds.jose.util.Base64URL;
import com.nimbusds.jose.util.JSONObjectUtils;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.SignedJWT;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.Signature;
import java.text.ParseException;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Base64;
import java.util.Date;
import java.util.HexFormat;
import java.util.List;

/**
 * Signs dynamic (per-request) webhooks, two ways (local/README.md, "Dynamic webhooks"):
 * <ul>
 *   <li>{@link #jwt}, as the Gemini API documents it: {@code webhook-signature} holds an RS256 JWT whose key the
 *       receiver finds by {@code kid} in a JWKS, and whose payload contains the event (Google's sample reads it with
 *       {@code jwt.decode}; hookdeck/webhook-skills, skills/gemini-webhooks/references/verification.md at 97c01d72):
 *       the event's fields, with {@code iss} {@value #ISSUER}, {@code aud} the URI the delivery goes to, {@code iat},
 *       {@code exp} {@link #LIFETIME} later and {@code jti} the {@code webhook-id}. Receivers that bind a token to
 *       the body by a {@value #BODY_HASH_CLAIM} claim are tested with {@link #jwt(JWTClaimsSet)};</li>
 *   <li>{@link #v1a}, as live deliveries were reported to look (googleapis/python-genai issue 2927): Standard
 *       Webhooks' asymmetric scheme, {@code v1a,<base64 Ed25519 signature of "id.timestamp.body">}, with the
 *       Ed25519 public key in the same JWKS.</li>
 * </ul>
 * Each stand-in has keys of its own, made at first use. Public so tests elsewhere can sign deliveries.
 */
public final class DynamicWebhookSigner {
  /** The issuer the stand-in's tokens carry: the origin of Google's JWKS URL (not documented; see the README). */
  public static final String ISSUER = "https://generativelanguage.googleapis.com";
  public static final String BODY_HASH_CLAIM = "sha256";
  public static final Duration LIFETIME = Duration.ofMinutes(5);

  /** The DER prefix of an X.509 Ed25519 public key; the raw 32-byte key follows it. */
  private static final byte[] ED25519_X509_PREFIX = HexFormat.of().parseHex("302a300506032b6570032100");

  /** Made at first use: see {@link #generate()}. */
  private Keys keys;

  private DynamicWebhookSigner() {}

  /**
   * A signer with a fresh 2048-bit RSA key (its {@code kid} its thumbprint) and a fresh Ed25519 key, both made when
   * first used: an RSA key takes seconds of CPU in a JVM without C2 (the suite's), and most stand-ins never sign a
   * dynamic webhook.
   */
  public static DynamicWebhookSigner generate() {
    return new DynamicWebhookSigner();
  }

  private synchronized Keys keys() {
    if (keys == null) {
      keys = Keys.generate();
    }
    return keys;
  }

  private record Keys(RSAKey rsa, KeyPair ed25519, OctetKeyPair ed25519Jwk) {
    static Keys generate() {
      try {
        RSAKey rsa = new RSAKeyGenerator(2048).keyUse(KeyUse.SIGNATURE).algorithm(JWSAlgorithm.RS256)
            .keyIDFromThumbprint(true).generate();
        KeyPair ed25519 = KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
        byte[] encoded = ed25519.getPublic().getEncoded();
        OctetKeyPair jwk = new OctetKeyPair.Builder(Curve.Ed25519, Base64URL.encode(
            Arrays.copyOfRange(encoded, ED25519_X509_PREFIX.length, encoded.length)))
            .keyUse(KeyUse.SIGNATURE).keyID("ed25519-" + rsa.getKeyID().substring(0, 8)).build();
        return new Keys(rsa, ed25519, jwk);
      } catch (JOSEException | NoSuchAlgorithmException e) {
        throw new IllegalStateException("every JDK can make RSA and Ed25519 keys", e);
      }
    }
  }

  /** The {@code kid} of the RSA key JWTs are signed with. */
  public String keyId() {
    return keys().rsa().getKeyID();
  }

  /** The public halves of both keys, as a JWKS document. */
  public JWKSet publicKeys() {
    return new JWKSet(List.of(keys().rsa().toPublicJWK(), keys().ed25519Jwk()));
  }

  /** The {@code webhook-signature} value of the v1a scheme: {@code v1a,<base64 Ed25519 of "id.timestamp.body">}. */
  public String v1a(String webhookId, long timestampSeconds, byte[] body) {
    try {
      Signature signature = Signature.getInstance("Ed25519");
      signature.initSign(keys().ed25519().getPrivate());
      signature.update((webhookId + "." + timestampSeconds + ".").getBytes(StandardCharsets.UTF_8));
      signature.update(body);
      return "v1a," + Base64.getEncoder().encodeToString(signature.sign());
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("signing with a fresh Ed25519 key failed", e);
    }
  }

  /** The {@code webhook-signature} value of the JWT scheme, for one delivery attempt of {@code body} to {@code target}. */
  public String jwt(URI target, String webhookId, Instant issuedAt, byte[] body) {
    JWTClaimsSet.Builder claims = new JWTClaimsSet.Builder();
    try {
      JSONObjectUtils.parse(new String(body, StandardCharsets.UTF_8)).forEach(claims::claim);
    } catch (ParseException e) {
      throw new IllegalArgumentException("a webhook's body is a JSON event", e);
    }
    return jwt(claims
        .issuer(ISSUER)
        .audience(target.toString())
        .issueTime(Date.from(issuedAt))
        .expirationTime(Date.from(issuedAt.plus(LIFETIME)))
        .jwtID(webhookId)
        .build());
  }

  /** Any claims, signed as {@link #jwt(URI, String, Instant, byte[])} signs: tests make hostile tokens with it. */
  public String jwt(JWTClaimsSet claims) {
    SignedJWT jwt = new SignedJWT(
        new JWSHeader.Builder(JWSAlgorithm.RS256).keyID(keys().rsa().getKeyID()).type(JOSEObjectType.JWT).build(),
        claims);
    try {
      jwt.sign(new RSASSASigner(keys().rsa()));
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
