package dev.once.pipeline;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.once.gemini.SigningKeys;
import dev.once.http.IdempotentPost;
import dev.once.key.IdempotencyKey;
import dev.once.key.Sha256;
import dev.once.local.http.Receiver;
import dev.once.local.node.NodeProject;
import dev.once.wire.gemini.WebhookSigner;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.InstantSource;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A notification as a receiver sees it is signed as Standard Webhooks: verified here by a receiver written from the
 * specification in JavaScript (test resource {@code standard-webhooks/verify.js}, node's crypto only), not by this
 * project's signer or verifier. Rotation signs with both secrets, so a receiver holding either verifies; a changed
 * body, another secret or a stale timestamp does not verify.
 */
class NotificationSignatureTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private final Receiver endpoint = Receiver.start();
  private final byte[] body = "{\"idempotencyKey\":\"gcs:inbox/a.pdf#1\",\"result\":{\"status\":\"analysed\"}}"
      .getBytes(StandardCharsets.UTF_8);

  @AfterEach
  void stop() {
    endpoint.close();
  }

  @Test
  void aNotification_isVerifiedByAnIndependentStandardWebhooksReceiver() throws Exception {
    String secret = WebhookSigner.newSecret();
    Receiver.Received received = notified(NotificationSigner.fromSecrets(secret), "gcs:inbox/a.pdf#1");

    assertEquals("verified", receiverSays(secret, received, null));
    assertEquals("msg_" + Sha256.hex("gcs:inbox/a.pdf#1"), received.header("webhook-id"));
    assertEquals("gcs:inbox/a.pdf#1", received.header("Idempotency-Key"));
  }

  @Test
  void duringARotation_bothSecretsSign_andAReceiverHoldingEitherVerifies() throws Exception {
    String old = WebhookSigner.newSecret();
    String next = WebhookSigner.newSecret();
    Receiver.Received received = notified(NotificationSigner.fromSecrets(old + " " + next), "k");

    assertEquals(2, received.header("webhook-signature").split(" ").length);
    assertEquals("verified", receiverSays(old, received, null));
    assertEquals("verified", receiverSays(next, received, null));
  }

  @Test
  void aChangedBody_anotherSecret_orAStaleTimestamp_doNotVerify() throws Exception {
    String secret = WebhookSigner.newSecret();
    Receiver.Received received = notified(NotificationSigner.fromSecrets(secret), "k");
    Receiver.Received changed = new Receiver.Received(received.path(), received.headers(),
        "{\"idempotencyKey\":\"k\",\"result\":{\"status\":\"paid\"}}".getBytes(StandardCharsets.UTF_8), 200);

    assertEquals("no matching signature", receiverSays(secret, changed, null));
    assertEquals("no matching signature", receiverSays(WebhookSigner.newSecret(), received, null));
    assertEquals("timestamp outside tolerance",
        receiverSays(secret, received, Instant.now().plus(Duration.ofMinutes(6)).getEpochSecond()));
  }

  /**
   * The README's receiver snippet, run as written with the standardwebhooks package it names (test node project
   * {@code src/test/node/readme-receiver}; only Express is stood in for), accepts a real notification and refuses a
   * changed body or another secret: the snippet users copy verifies what the notifier sends.
   */
  @Test
  void theReadmesReceiverSnippet_verifiesARealNotification_andRefusesAForgedOne() throws Exception {
    String secret = WebhookSigner.newSecret();
    Receiver.Received received = notified(NotificationSigner.fromSecrets(secret), "gcs:inbox/a.pdf#1");
    Receiver.Received changed = new Receiver.Received(received.path(), received.headers(),
        "{\"idempotencyKey\":\"gcs:inbox/a.pdf#1\",\"result\":{\"status\":\"paid\"}}".getBytes(StandardCharsets.UTF_8),
        200);

    assertEquals("200", readmeReceiverSays(secret, received));
    assertEquals("refused: No matching signature found", readmeReceiverSays(secret, changed));
    assertEquals("refused: No matching signature found", readmeReceiverSays(WebhookSigner.newSecret(), received));
  }

  private static String readmeReceiverSays(String secret, Receiver.Received received) throws Exception {
    Map<String, Object> input = new LinkedHashMap<>();
    input.put("readme", Path.of("..", "README.md").toAbsolutePath().normalize().toString());
    input.put("secret", secret);
    Map<String, String> headers = new LinkedHashMap<>();
    for (String name : List.of("webhook-id", "webhook-timestamp", "webhook-signature", "idempotency-key")) {
      headers.put(name, received.header(name));
    }
    input.put("headers", headers);
    input.put("body", Base64.getEncoder().encodeToString(received.body()));
    return new NodeProject(Path.of("src/test/node/readme-receiver"), "standardwebhooks")
        .run("receiver.js", List.of(), Map.of(), JSON.writeValueAsString(input), 120).strip();
  }

  /** Every try of one result keeps its id (receivers drop copies by it) and is signed afresh at its own time. */
  @Test
  void aRetry_keepsTheId_andIsSignedAtItsOwnTime() {
    SigningKeys keys = SigningKeys.parse(PipelineSetting.NOTIFY_SIGNING_SECRET, WebhookSigner.newSecret());
    Map<String, String> first = new NotificationSigner(keys, InstantSource.fixed(Instant.ofEpochSecond(1_800_000_000)))
        .headers("k", body);
    Map<String, String> retry = new NotificationSigner(keys, InstantSource.fixed(Instant.ofEpochSecond(1_800_000_060)))
        .headers("k", body);

    assertEquals(first.get("webhook-id"), retry.get("webhook-id"));
    assertEquals("1800000000", first.get("webhook-timestamp"));
    assertNotEquals(first.get("webhook-signature"), retry.get("webhook-signature"));
  }

  private Receiver.Received notified(NotificationSigner signer, String key) {
    endpoint.answerNext(200);
    IdempotentPost notifier = IdempotentPost.to(endpoint.url("/notify")).withTimeout(Duration.ofSeconds(5))
        .withHeaders(signer);
    assertEquals(200, notifier.post(IdempotencyKey.of(key), "application/json", body).status());
    List<Receiver.Received> all = endpoint.received();
    return all.get(all.size() - 1);
  }

  /** What the JavaScript receiver answers: "verified", or why not. */
  private static String receiverSays(String secret, Receiver.Received received, Long now) throws Exception {
    Map<String, Object> input = new LinkedHashMap<>();
    input.put("secret", secret);
    Map<String, String> headers = new LinkedHashMap<>();
    for (String name : List.of("webhook-id", "webhook-timestamp", "webhook-signature")) {
      headers.put(name, received.header(name));
    }
    input.put("headers", headers);
    input.put("body", Base64.getEncoder().encodeToString(received.body()));
    if (now != null) {
      input.put("now", now);
    }
    Process node = new ProcessBuilder("node", script().toString()).redirectErrorStream(true).start();
    try (OutputStream stdin = node.getOutputStream()) {
      stdin.write(JSON.writeValueAsBytes(input));
    }
    assertTrue(node.waitFor(60, TimeUnit.SECONDS), "node answered");
    String said = new String(node.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
    assertEquals(said.equals("verified") ? 0 : 1, node.exitValue(), said);
    return said;
  }

  private static Path script() throws IOException, URISyntaxException {
    return Path.of(NotificationSignatureTest.class.getResource("/standard-webhooks/verify.js").toURI());
  }
}
