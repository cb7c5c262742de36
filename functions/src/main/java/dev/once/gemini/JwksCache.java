package dev.once.gemini;

import com.nimbusds.jose.KeySourceException;
import com.nimbusds.jose.jwk.JWK;
import com.nimbusds.jose.jwk.JWKSelector;
import com.nimbusds.jose.jwk.JWKSet;
import com.nimbusds.jose.jwk.source.JWKSource;
import com.nimbusds.jose.proc.SecurityContext;
import com.nimbusds.jose.util.DefaultResourceRetriever;
import com.nimbusds.jose.util.ResourceRetriever;
import java.io.IOException;
import java.net.MalformedURLException;
import java.net.URI;
import java.net.URL;
import java.text.ParseException;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The signing keys of a JWKS URL, fetched when first needed and kept at most {@code maxAge}; a document of more
 * than {@code maxKeys} keys or {@value #MAX_BYTES} bytes is refused. A key id the cached document does not have
 * (Google rotated its keys, or a forged token) fetches the document again, but at most once per {@code
 * minRefetchInterval}, so tokens with made-up key ids cannot turn the webhook into a stream of requests to Google.
 * Every fetch has connect and read timeouts; a failed fetch throws (the caller answers 503), stale keys are never
 * used instead.
 */
final class JwksCache implements JWKSource<SecurityContext> {
  static final int MAX_BYTES = 64 * 1024;

  private final URL url;
  private final ResourceRetriever retriever;
  private final Duration maxAge;
  private final Duration minRefetchInterval;
  private final int maxKeys;
  private final InstantSource clock;
  private final AtomicLong fetches = new AtomicLong();
  private JWKSet keys;
  private Instant fetchedAt;
  private Instant lastUnknownKeyRefetch;

  JwksCache(URI url, Duration connectTimeout, Duration readTimeout, Duration maxAge, Duration minRefetchInterval,
      int maxKeys, InstantSource clock) {
    try {
      this.url = url.toURL();
    } catch (MalformedURLException | IllegalArgumentException e) {
      throw new IllegalArgumentException("not a JWKS URL: " + url, e);
    }
    this.retriever = new DefaultResourceRetriever(
        Math.toIntExact(connectTimeout.toMillis()), Math.toIntExact(readTimeout.toMillis()), MAX_BYTES);
    this.maxAge = maxAge;
    this.minRefetchInterval = minRefetchInterval;
    this.maxKeys = maxKeys;
    this.clock = clock;
  }

  /** How many times the document was fetched (successfully or not). */
  long fetches() {
    return fetches.get();
  }

  /** What {@code selector} picks from the document, fetched first if there is none or it is older than maxAge. */
  synchronized List<JWK> select(JWKSelector selector) throws KeySourceException {
    Instant now = clock.instant();
    if (keys == null || !now.isBefore(fetchedAt.plus(maxAge))) {
      fetch(now);
    }
    return selector.select(keys);
  }

  /**
   * Fetches the document again for a key it did not have, unless that was done less than minRefetchInterval ago.
   * Returns whether it fetched.
   */
  synchronized boolean refetchForUnknownKey() throws KeySourceException {
    Instant now = clock.instant();
    if (lastUnknownKeyRefetch != null && now.isBefore(lastUnknownKeyRefetch.plus(minRefetchInterval))) {
      return false;
    }
    lastUnknownKeyRefetch = now;
    fetch(now);
    return true;
  }

  /** For nimbus' key selector: the matching keys, after one more fetch if there are none. */
  @Override
  public synchronized List<JWK> get(JWKSelector selector, SecurityContext context) throws KeySourceException {
    List<JWK> found = select(selector);
    if (found.isEmpty() && refetchForUnknownKey()) {
      found = selector.select(keys);
    }
    return found;
  }

  private void fetch(Instant now) throws KeySourceException {
    fetches.incrementAndGet();
    JWKSet fetched;
    try {
      fetched = JWKSet.parse(retriever.retrieveResource(url).getContent());
    } catch (IOException e) {
      throw new KeySourceException("could not fetch the JWKS at " + url + ": " + e.getMessage(), e);
    } catch (ParseException e) {
      throw new KeySourceException("the JWKS at " + url + " is not a JWK set: " + e.getMessage(), e);
    }
    if (fetched.getKeys().size() > maxKeys) {
      throw new KeySourceException("the JWKS at " + url + " has " + fetched.getKeys().size() + " keys, more than "
          + maxKeys);
    }
    keys = fetched;
    fetchedAt = now;
  }
}
