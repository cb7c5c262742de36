package dev.once.functions;

import dev.once.pipeline.ResultSignature;
import dev.once.wire.gemini.WebhookSigner;
import java.util.Map;

/** The results' signing key of the unit tests (RESULTS_SIGNING_KEY), made afresh for each test JVM. */
public final class TestSignatures {
  public static final String RESULTS_KEY = WebhookSigner.newSecret();
  public static final ResultSignature RESULTS = ResultSignature.fromKeys(RESULTS_KEY);

  private TestSignatures() {}

  /** Matches a result's attributes: its {@code idempotency_key}, and a signature beside it. */
  public static Map<String, String> keyed(String key) {
    return org.mockito.ArgumentMatchers.argThat(attributes -> key.equals(attributes.get("idempotency_key"))
        && attributes.containsKey(ResultSignature.ATTRIBUTE));
  }
}
