package dev.once.gemini;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.KeySourceException;
import com.nimbusds.jose.proc.BadJOSEException;
import com.nimbusds.jose.proc.DefaultJOSEObjectTypeVerifier;
import com.nimbusds.jose.proc.JWSVerificationKeySelector;
import com.nimbusds.jose.proc.SecurityContext;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.proc.BadJWTException;
import com.nimbusds.jwt.proc.DefaultJWTClaimsVerifier;
import com.nimbusds.jwt.proc.DefaultJWTProcessor;
import dev.once.observe.ForeignText;
import java.io.IOException;
import java.net.URI;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.text.ParseException;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Base64;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

/**
 * Verifies a dynamic Gemini webhook: one the API sends to the {@code webhook_config.uris} of a batch job, signed
 * with an RS256 JWT in the {@code webhook-signature} header that Google's JWKS verifies (Gemini API docs,
 * "Webhooks"; what the documentation leaves open is read defensively, see local/README.md "Dynamic webhooks").
 * A token passes only if all of these hold:
 * <ul>
 *   <li>it is a signed JWT with {@code alg} RS256 (no {@code none}, no HS256 keyed with the public key, nothing
 *       else), {@code typ} JWT or absent, signed by a key of the JWKS with its {@code kid};</li>
 *   <li>{@code iss} is the expected issuer, {@code aud} contains this webhook's own URL;</li>
 *   <li>{@code exp} is in the future and {@code nbf} (if any) in the past, {@code iat} (if any) not in the future,
 *       each with {@link Options#leeway()};</li>
 *   <li>the token is bound to the body: by a {@code sha256} claim, the base64 SHA-256 of the raw body; or, without
 *       one, by carrying the event itself, as Google documents it ("the JWT payload contains the event", read with
 *       {@code jwt.decode}): its {@code type} and the batch job it names must be the body's, the only fields the
 *       pipeline acts on.</li>
 * </ul>
 * Live deliveries were reported to carry Standard Webhooks' asymmetric signature instead (googleapis/python-genai
 * issue 2927): a header of {@code v1a,<base64>} entries is checked as Ed25519 signatures of {@code
 * "<webhook-id>.<webhook-timestamp>.<raw body>"} against the Ed25519 keys of the same JWKS, with the timestamp
 * within {@link WebhookMessage#TOLERANCE}, at most {@link V1aSignatures#MAX_CHECKS} checks per request. Such a
 * signature names no audience, so a delivery Google signed for another endpoint would verify too: {@link #verify}
 * says so, and the webhook accepts it only for a job this pipeline submitted.
 * <p>A failed check is an {@link InvalidSignature} (answer 401); keys that cannot be fetched are a
 * {@link JwksUnavailable} (answer 503, Gemini retries): never a pass. Keys are cached (see {@link JwksCache}).
 * Thread-safe; make one per instance.
 */
public final class DynamicWebhookVerifier {
  /** Google's published keys for dynamic webhooks. */
  public static final URI GOOGLE_JWKS_URL = URI.create(GeminiSetting.GEMINI_WEBHOOK_JWKS_URL.defaultValue());
  /** Not documented: the origin of the JWKS URL, as OpenID Connect has it. A setting for that reason. */
  public static final String GOOGLE_ISSUER = GeminiSetting.GEMINI_WEBHOOK_ISSUER.defaultValue();
  public static final String SIGNATURE_HEADER = "webhook-signature";
  public static final String BODY_HASH_CLAIM = "sha256";
  private static final int MAX_TOKEN_CHARS = 16 * 1024;
  private static final ObjectMapper JSON = new ObjectMapper();

  /**
   * @param audience this webhook's own URL, exactly as given in {@code webhook_config.uris}
   * @param maxKeyAge how long fetched keys are used before the JWKS is fetched again
   * @param minRefetchInterval at most one extra fetch per this interval for a token with an unknown {@code kid}
   * @param maxKeys a JWKS with more keys is refused
   */
  public record Options(URI jwksUrl, String issuer, String audience, Duration leeway, Duration maxKeyAge,
      Duration minRefetchInterval, Duration connectTimeout, Duration readTimeout, int maxKeys) {
    public Options {
      if (!"https".equals(jwksUrl.getScheme()) && !"http".equals(jwksUrl.getScheme())) {
        throw new IllegalArgumentException("the JWKS URL must be http(s): " + jwksUrl);
      }
      if (issuer == null || issuer.isBlank() || audience == null || audience.isBlank()) {
        throw new IllegalArgumentException("an issuer and an audience (the webhook's URL) are required");
      }
    }

    /** Google's JWKS and issuer, a minute of leeway, keys kept an hour, 2 s to connect and 3 s to read. */
    public static Options forAudience(String audience) {
      return new Options(GOOGLE_JWKS_URL, GOOGLE_ISSUER, audience, Duration.ofSeconds(60), Duration.ofHours(1),
          Duration.ofSeconds(30), Duration.ofSeconds(2), Duration.ofSeconds(3), 20);
    }

    public Options withJwksUrl(URI value) {
      return new Options(value, issuer, audience, leeway, maxKeyAge, minRefetchInterval, connectTimeout,
          readTimeout, maxKeys);
    }

    public Options withIssuer(String value) {
      return new Options(jwksUrl, value, audience, leeway, maxKeyAge, minRefetchInterval, connectTimeout,
          readTimeout, maxKeys);
    }

    public Options withKeyCaching(Duration maxAge, Duration refetchInterval) {
      return new Options(jwksUrl, issuer, audience, leeway, maxAge, refetchInterval, connectTimeout, readTimeout,
          maxKeys);
    }
  }

  private final Options options;
  private final InstantSource clock;
  private final JwksCache keys;
  private final DefaultJWTProcessor<SecurityContext> processor = new DefaultJWTProcessor<>();

  public DynamicWebhookVerifier(Options options) {
    this(options, InstantSource.system());
  }

  DynamicWebhookVerifier(Options options, InstantSource clock) {
    this.options = options;
    this.clock = clock;
    this.keys = new JwksCache(options.jwksUrl(), options.connectTimeout(), options.readTimeout(),
        options.maxKeyAge(), options.minRefetchInterval(), options.maxKeys(), clock);
    processor.setJWSTypeVerifier(new DefaultJOSEObjectTypeVerifier<>(JOSEObjectType.JWT, null));
    processor.setJWSKeySelector(new JWSVerificationKeySelector<>(JWSAlgorithm.RS256, keys));
    DefaultJWTClaimsVerifier<SecurityContext> claims = new DefaultJWTClaimsVerifier<>(Set.of(options.audience()),
        new JWTClaimsSet.Builder().issuer(options.issuer()).build(),
        Set.of("iss", "aud", "exp"), null) {
      @Override
      protected Date currentTime() {
        return Date.from(clock.instant());
      }
    };
    claims.setMaxClockSkew(Math.toIntExact(options.leeway().toSeconds()));
    // Claims are checked only once the signature verified: a token Google signed. Its iss and aud then say what a
    // deployment must be set to (GEMINI_WEBHOOK_ISSUER, GEMINI_WEBHOOK_URL) when every delivery is refused.
    processor.setJWTClaimsSetVerifier((claimsSet, context) -> {
      try {
        claims.verify(claimsSet, context);
      } catch (BadJWTException e) {
        throw new BadJWTException(e.getMessage() + " (signed token with iss " + shown(claimsSet.getIssuer())
            + ", aud " + shown(String.valueOf(claimsSet.getAudience())) + ")");
      }
    });
  }

  private static String shown(String value) {
    return ForeignText.cut(value, 200);
  }

  /** How many times the JWKS was fetched: a cache that works keeps this low. */
  long jwksFetches() {
    return keys.fetches();
  }

  /**
   * @param header a request header by name, case-insensitive
   * @param body the raw request body, exactly as received
   * @return true when the delivery is bound to this webhook (a token whose {@code aud} names its URL); false for a
   *     {@code v1a} signature, which covers the delivery but names no endpoint: the caller binds it to a job of its own
   * @throws InvalidSignature the delivery must be refused (401)
   * @throws JwksUnavailable the keys could not be fetched (503)
   */
  public boolean verify(Function<String, Optional<String>> header, byte[] body) throws InvalidSignature {
    String token = header.apply(SIGNATURE_HEADER)
        .orElseThrow(() -> new InvalidSignature("no " + SIGNATURE_HEADER + " header")).strip();
    if (token.length() > MAX_TOKEN_CHARS) {
      throw new InvalidSignature("the token is longer than " + MAX_TOKEN_CHARS + " characters");
    }
    if (V1aSignatures.present(token)) {
      verifyV1a(header, token, body);
      return false;
    }
    JWTClaimsSet claims;
    try {
      claims = processor.process(token, null);
    } catch (KeySourceException e) {
      throw new JwksUnavailable(e.getMessage(), e);
    } catch (ParseException | BadJOSEException | JOSEException e) {
      throw new InvalidSignature("the token does not verify: " + e.getMessage());
    }
    checkIssuedAt(claims);
    checkBody(claims, body);
    return true;
  }

  private void verifyV1a(Function<String, Optional<String>> header, String signatures, byte[] body)
      throws InvalidSignature {
    WebhookMessage message = WebhookMessage.read(header, clock.instant());
    List<byte[]> offered = V1aSignatures.parse(signatures);
    V1aSignatures.Budget checks = new V1aSignatures.Budget();
    try {
      if (V1aSignatures.anyVerifies(keys.select(V1aSignatures.ED25519_KEYS), message, body, offered, checks)) {
        return;
      }
      // Perhaps signed with a key published since the keys were fetched: look once more, at most once per interval.
      if (keys.refetchForUnknownKey()
          && V1aSignatures.anyVerifies(keys.select(V1aSignatures.ED25519_KEYS), message, body, offered, checks)) {
        return;
      }
    } catch (KeySourceException e) {
      throw new JwksUnavailable(e.getMessage(), e);
    }
    throw new InvalidSignature("no v1a signature matches a key of the JWKS");
  }

  private void checkIssuedAt(JWTClaimsSet claims) throws InvalidSignature {
    if (claims.getIssueTime() != null
        && claims.getIssueTime().toInstant().isAfter(clock.instant().plus(options.leeway()))) {
      throw new InvalidSignature("the token was issued in the future");
    }
  }

  private static void checkBody(JWTClaimsSet claims, byte[] body) throws InvalidSignature {
    if (claims.getClaim(BODY_HASH_CLAIM) == null) {
      checkEvent(claims, body);
      return;
    }
    byte[] claimed;
    try {
      String hash = claims.getStringClaim(BODY_HASH_CLAIM);
      claimed = decodeBase64(hash);
    } catch (ParseException | IllegalArgumentException e) {
      throw new InvalidSignature("the " + BODY_HASH_CLAIM + " claim is not a base64 string");
    }
    if (!MessageDigest.isEqual(sha256(body), claimed)) {
      throw new InvalidSignature("the token was not made for this body");
    }
  }

  /** A token carrying the event: its type and the job it names are the body's (both absent counts as the same). */
  private static void checkEvent(JWTClaimsSet claims, byte[] body) throws InvalidSignature {
    Map<String, Object> event;
    try {
      event = JSON.readValue(body, new TypeReference<Map<String, Object>>() {});
    } catch (IOException | RuntimeException e) {
      throw new InvalidSignature("the token has no " + BODY_HASH_CLAIM + " claim and the body is not a JSON event");
    }
    Map<String, Object> carried = claims.toJSONObject();
    if (!(carried.get("type") instanceof String type)) {
      throw new InvalidSignature(
          "the token is bound to no body: no " + BODY_HASH_CLAIM + " claim, and no event (type)");
    }
    if (!type.equals(event.get("type")) || !Objects.equals(jobNamed(carried), jobNamed(event))) {
      throw new InvalidSignature("the token carries another event (" + type + ", " + jobNamed(carried) + ")");
    }
  }

  private static String jobNamed(Map<String, ?> event) {
    try {
      return GeminiCompletionKeys.of(event).value();
    } catch (RuntimeException e) {
      return null;
    }
  }

  /** Standard or URL-safe alphabet, padded or not: the claim is compared as the 32 bytes it stands for. */
  private static byte[] decodeBase64(String text) {
    String standard = text.replace('-', '+').replace('_', '/');
    return Base64.getDecoder().decode(standard + "=".repeat((4 - standard.length() % 4) % 4));
  }

  private static byte[] sha256(byte[] body) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(body);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK has SHA-256", e);
    }
  }
}
