package dev.once.cli.webhook;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.once.cli.Exit;
import dev.once.cli.OnceRunner;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@code once webhook} through google-genai's Webhooks API, against a stand-in of the Gemini WebhookService. */
class WebhookCommandTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private WebhookService gemini;

  @BeforeEach
  void start() throws Exception {
    gemini = new WebhookService();
  }

  @AfterEach
  void stop() {
    gemini.close();
  }

  private Map<String, String> env() {
    return Map.of("GEMINI_API_KEY", WebhookService.API_KEY, "GEMINI_BASE_URL", gemini.baseUrl());
  }

  private OnceRunner.Result once(String... args) {
    return OnceRunner.run(env(), args);
  }

  private String register() {
    OnceRunner.Result registered = once("--yes", "webhook", "register", "--url", "https://example.run.app/webhook");
    assertEquals(Exit.OK, registered.status(), registered.all() + gemini.calls());
    return gemini.webhooks().keySet().iterator().next();
  }

  @Test
  void register_sendsTheBatchEvents_andPrintsTheSecretAloneOnStandardOutput() throws Exception {
    OnceRunner.Result result = once("--yes", "webhook", "register", "--url", "https://example.run.app/webhook");

    assertEquals(Exit.OK, result.status(), result.all());
    String id = gemini.webhooks().keySet().iterator().next();
    assertEquals(gemini.secrets(id).get(0) + System.lineSeparator(), result.out(), "only the secret: " + result.all());
    assertTrue(result.err().contains("registered " + id + "  https://example.run.app/webhook  enabled"), result.all());
    WebhookService.Call create = gemini.calls().get(0);
    assertEquals("POST /v1beta/webhooks", create.method() + " " + create.path());
    JsonNode body = JSON.readTree(create.body());
    assertEquals("https://example.run.app/webhook", body.get("uri").asText());
    assertEquals("once", body.get("name").asText());
    assertEquals(List.of("batch.succeeded", "batch.failed", "batch.expired"),
        JSON.convertValue(body.get("subscribed_events"), List.class));
  }

  @Test
  void rotate_keepsThePreviousSecretForADayByDefault_andPrintsTheNewOne() throws Exception {
    String id = register();

    OnceRunner.Result rotated = once("--yes", "webhook", "rotate", id);

    assertEquals(Exit.OK, rotated.status(), rotated.all());
    assertEquals(2, gemini.secrets(id).size());
    assertEquals(gemini.secrets(id).get(1) + System.lineSeparator(), rotated.out(), rotated.all());
    WebhookService.Call call = gemini.calls().get(gemini.calls().size() - 1);
    assertEquals("POST /v1beta/webhooks/" + id + ":rotateSigningSecret", call.method() + " " + call.path());
    assertEquals("revoke_previous_secrets_after_h24", JSON.readTree(call.body()).get("revocation_behavior").asText());

    OnceRunner.Result now = once("--yes", "webhook", "rotate", id, "--revoke-now");
    assertEquals(Exit.OK, now.status(), now.all());
    assertEquals("revoke_previous_secrets_immediately",
        JSON.readTree(gemini.calls().get(gemini.calls().size() - 1).body()).get("revocation_behavior").asText());
  }

  /**
   * A webhook change names itself, the project and the account and is not made unconfirmed; a GEMINI_BASE_URL that is
   * not this machine (a leftover) is refused before the key is sent anywhere.
   */
  @Test
  void changesAreNotMadeUnconfirmed_andTheKeyGoesToNoOtherHost() {
    String id = register();
    OnceRunner.Result refused = OnceRunner.runAnswering(env(), "n\n", "webhook", "delete", id);
    assertEquals(Exit.NOTHING, refused.status(), refused.all());
    assertTrue(refused.err().contains("about to delete webhook " + id), refused.all());
    assertTrue(gemini.webhooks().containsKey(id), "not deleted");
    int calls = gemini.calls().size();

    OnceRunner.Result elsewhere = OnceRunner.run(Map.of("GEMINI_API_KEY", WebhookService.API_KEY,
        "GEMINI_BASE_URL", "https://gemini-proxy.example.com"), "--yes", "webhook", "list");
    assertEquals(Exit.USAGE, elsewhere.status(), elsewhere.all());
    assertTrue(elsewhere.err().contains("not this machine"), elsewhere.all());
    assertEquals(calls, gemini.calls().size(), "nothing sent");
  }

  @Test
  void ping_list_andDelete_thenTheWebhookIsGone() {
    String id = register();

    OnceRunner.Result ping = once("webhook", "ping", id);
    assertEquals(Exit.OK, ping.status(), ping.all());
    assertTrue(gemini.calls().stream().anyMatch(c -> c.path().equals("/v1beta/webhooks/" + id + ":ping")));

    OnceRunner.Result list = once("webhook", "list");
    assertEquals(Exit.OK, list.status(), list.all());
    assertTrue(list.out().startsWith(id + "  https://example.run.app/webhook  enabled  events [batch.succeeded,"
        + " batch.failed, batch.expired]  name once  secrets [whsec_"), list.all());

    OnceRunner.Result deleted = once("--yes", "webhook", "delete", id);
    assertEquals(Exit.OK, deleted.status(), deleted.all());
    assertTrue(gemini.webhooks().isEmpty());

    OnceRunner.Result gone = once("webhook", "ping", id);
    assertEquals(Exit.NOTHING, gone.status(), gone.all());
    assertTrue(gone.err().contains("the Gemini API has no such webhook"), gone.all());
    OnceRunner.Result none = once("webhook", "list");
    assertEquals(Exit.NOTHING, none.status(), none.all());
  }

  @Test
  void aRegistrationThatTimesOut_mayHaveHappened_andTheToolSaysWhereToLook() {
    gemini.stallNext();

    OnceRunner.Result result =
        once("--yes", "webhook", "register", "--url", "https://example.run.app/webhook", "--timeout", "2s");

    assertEquals(Exit.REMOTE, result.status(), result.all());
    assertEquals("", result.out(), "no secret printed: " + result.all());
    assertTrue(result.err().contains("it may have been created anyway: once webhook list shows it"), result.all());
    assertEquals(1, result.errLinesBesideTheNotice(), result.all());
    assertEquals(1, gemini.webhooks().size(), "the stand-in did create it");
  }

  @Test
  void aRefusedKey_isExit3_andNoKeyAtAll_isAUsageError() {
    OnceRunner.Result refused = OnceRunner.run(Map.of("GEMINI_API_KEY", "wrong", "GEMINI_BASE_URL", gemini.baseUrl()),
        "webhook", "list");
    assertEquals(Exit.REMOTE, refused.status(), refused.all());
    assertTrue(refused.err().contains("the Gemini API answered 400"), refused.all());
    assertFalse(refused.err().contains("wrong"), "the key is not repeated: " + refused.all());

    OnceRunner.Result missing = OnceRunner.run(Map.of("GEMINI_BASE_URL", gemini.baseUrl()), "webhook", "list");
    assertEquals(Exit.USAGE, missing.status(), missing.all());
    assertTrue(missing.err().contains("GEMINI_API_KEY is not set"), missing.all());
  }
}
