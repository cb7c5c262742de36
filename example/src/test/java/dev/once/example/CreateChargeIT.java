package dev.once.example;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.cloud.firestore.DocumentSnapshot;
import com.google.cloud.firestore.Firestore;
import dev.once.firestore.FirestoreClients;
import dev.once.key.IdempotencyKey;
import dev.once.local.Await;
import dev.once.local.Bounds;
import dev.once.local.emulator.FirestoreEmulator;
import dev.once.local.http.Faults;
import dev.once.local.http.Receiver;
import dev.once.local.invoker.FunctionProcess;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The README's example under the real Functions Framework invoker, served from its deployable jar in its own JVM,
 * against the Firestore emulator and a payment endpoint that records every request (and can be stalled or fail):
 * what a client of an Idempotency-Key API sees, and what was paid and recorded.
 */
class CreateChargeIT {
  private static final String PROJECT = "once-example-it";
  private static final String CHARGE = "{\"amount\":1200,\"currency\":\"eur\"}";
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private static Receiver payments;
  private static FunctionProcess function;
  private static Firestore db;

  @BeforeAll
  static void start() {
    FirestoreEmulator emulator = FirestoreEmulator.shared();
    payments = Receiver.start();
    function = Served.start(CreateCharge.class, environment());
    db = FirestoreClients.forEmulator(PROJECT, emulator.hostPort());
  }

  private static Map<String, String> environment() {
    return Map.of(
        "GOOGLE_CLOUD_PROJECT", PROJECT,
        "FIRESTORE_EMULATOR_HOST", FirestoreEmulator.shared().hostPort(),
        "PAYMENTS_URL", payments.url("/v1/payments").toString());
  }

  @AfterAll
  static void stop() throws Exception {
    if (function != null) {
      function.close();
    }
    if (payments != null) {
      payments.close();
    }
    if (db != null) {
      db.close();
    }
  }

  @Test
  void retriesWithTheSameKey_getTheSameAnswerMarkedAsAReplay_andThePaymentIsMadeOnce() throws Exception {
    String key = UUID.randomUUID().toString();
    HttpResponse<String> first = charge(key, CHARGE);
    assertEquals(201, first.statusCode(), first.body());
    assertTrue(first.headers().firstValue("Idempotent-Replayed").isEmpty());
    String id = JSON.readTree(first.body()).path("id").asText();

    for (int i = 0; i < 5; i++) {
      HttpResponse<String> retry = charge(key, CHARGE);
      assertEquals(201, retry.statusCode());
      assertEquals(first.body(), retry.body());
      assertEquals(first.headers().firstValue("Content-Type"), retry.headers().firstValue("Content-Type"));
      assertEquals("true", retry.headers().firstValue("Idempotent-Replayed").orElse(null));
    }
    assertEquals(1, paymentsWith(key).size(), "one payment for six requests");
    DocumentSnapshot charged =
        db.collection("charges").document(id).get().get(Bounds.CALL.toSeconds(), TimeUnit.SECONDS);
    assertEquals(1200L, charged.getLong("amount"));
    assertEquals("eur", charged.getString("currency"));
    assertEquals(id, charged.getString("id"));
  }

  @Test
  void aBurstOfTheSameRequestAtOnce_paysOnce_everyOtherAnswerIsAReplayOr409() throws Exception {
    String key = UUID.randomUUID().toString();
    List<CompletableFuture<HttpResponse<String>>> burst = IntStream.range(0, 8)
        .mapToObj(i -> CompletableFuture.supplyAsync(() -> send(key, CHARGE))).toList();
    List<HttpResponse<String>> answers = new ArrayList<>();
    for (CompletableFuture<HttpResponse<String>> answer : burst) {
      answers.add(answer.get(Bounds.PATIENT.toSeconds(), TimeUnit.SECONDS));
    }

    List<HttpResponse<String>> originals = answers.stream()
        .filter(a -> a.statusCode() == 201 && a.headers().firstValue("Idempotent-Replayed").isEmpty()).toList();
    assertEquals(1, originals.size(), "exactly one request ran");
    for (HttpResponse<String> answer : answers) {
      boolean replay = answer.statusCode() == 201 && answer.body().equals(originals.get(0).body());
      assertTrue(answer.statusCode() == 409 || replay, answer.statusCode() + " " + answer.body());
    }
    assertEquals(1, paymentsWith(key).size());
  }

  /**
   * The first request's payment is held at the payment endpoint until the second request was answered, so the first is
   * in flight when the second comes, by construction (a stall of 6 s inside the function's 10 s payment timeout was a
   * bet on the test's speed): CreateCharge served with a payment timeout of minutes ({@link PatientCreateCharge}), so
   * the hold cannot outlast it.
   */
  @Test
  void aRetryWhileTheFirstIsInFlight_is409_andTheFirstStillCompletesOnce() throws Exception {
    String key = UUID.randomUUID().toString();
    int before = payments.received().size();
    try (FunctionProcess patient = Served.start(PatientCreateCharge.class, environment(),
        List.of(Path.of(PatientCreateCharge.class.getProtectionDomain().getCodeSource().getLocation().toURI())))) {
      Faults.Gate payment = payments.holdNext();
      CompletableFuture<HttpResponse<String>> first;
      HttpResponse<String> during;
      try {
        first = CompletableFuture.supplyAsync(() -> send(patient.url(), key, CHARGE));
        Await.until(Bounds.PATIENT, () -> payments.received().size() > before && payment.arrived() == 1,
            "the payment request");
        during = send(patient.url(), key, CHARGE);
      } finally {
        payment.release();
      }
      assertEquals(409, during.statusCode(), during.body());
      assertEquals("in_flight", JSON.readTree(during.body()).path("status").asText());
      assertTrue(during.headers().firstValue("Retry-After").isPresent());

      HttpResponse<String> completed = first.get(Bounds.PATIENT.toSeconds(), TimeUnit.SECONDS);
      assertEquals(201, completed.statusCode(), completed.body());
      HttpResponse<String> after = charge(key, CHARGE);
      assertEquals(completed.body(), after.body());
      assertEquals("true", after.headers().firstValue("Idempotent-Replayed").orElse(null));
      assertEquals(1, paymentsWith(key).size());
    }
  }

  @Test
  void theSameKeyWithAnotherBody_is422_andNothingMoreIsPaid() throws Exception {
    String key = UUID.randomUUID().toString();
    assertEquals(201, charge(key, CHARGE).statusCode());
    int before = payments.received().size();

    HttpResponse<String> reused = charge(key, "{\"amount\":99900,\"currency\":\"eur\"}");

    assertEquals(422, reused.statusCode(), reused.body());
    assertEquals("idempotency_key_reused", JSON.readTree(reused.body()).path("status").asText());
    assertEquals(before, payments.received().size());
  }

  /**
   * ONCE_RETENTION_DAYS after its last write the ledger's TTL deletes a key's record, but not the charge it
   * committed: the same key is then claimed afresh, and the re-run must record its answer over the old charge (same
   * id) instead of failing on it, or every retry would pay again. The old charge is written here directly, as the
   * state retention leaves behind.
   */
  @Test
  void theSameKeyAfterTheLedgersRetention_runsOnceMore_andRecordsItsAnswer() throws Exception {
    String key = UUID.randomUUID().toString();
    // IdempotentHttp's ledger key for an unscoped client key; the charge's id is its document id.
    String id = IdempotencyKey.of("http:CreateCharge::" + key).documentId();
    db.collection("charges").document(id).set(Map.of("amount", 1200L, "currency", "eur"))
        .get(Bounds.CALL.toSeconds(), TimeUnit.SECONDS);

    HttpResponse<String> afterRetention = charge(key, CHARGE);
    assertEquals(201, afterRetention.statusCode(), afterRetention.body());
    HttpResponse<String> retry = charge(key, CHARGE);
    assertEquals(201, retry.statusCode(), retry.body());
    assertEquals("true", retry.headers().firstValue("Idempotent-Replayed").orElse(null));
    assertEquals(1, paymentsWith(key).size(), "paid once more past retention, then replayed");
    DocumentSnapshot charged =
        db.collection("charges").document(id).get().get(Bounds.CALL.toSeconds(), TimeUnit.SECONDS);
    assertEquals(id, charged.getString("id"), "the re-run's charge: " + charged.getData());
  }

  @Test
  void aFreshKey_isANewCharge() throws Exception {
    String oneKey = UUID.randomUUID().toString();
    String twoKey = UUID.randomUUID().toString();
    JsonNode one = JSON.readTree(charge(oneKey, CHARGE).body());
    JsonNode two = JSON.readTree(charge(twoKey, CHARGE).body());

    assertNotEquals(one.path("id").asText(), two.path("id").asText());
    for (String key : List.of(oneKey, twoKey)) {
      assertEquals(1, paymentsWith(key).size());
    }
    for (JsonNode charge : List.of(one, two)) {
      assertTrue(db.collection("charges").document(charge.path("id").asText()).get()
          .get(Bounds.CALL.toSeconds(), TimeUnit.SECONDS)
          .exists());
    }
  }

  @Test
  void aFailedPayment_releasesTheKey_andTheRetryPaysWithTheSameKeyDownstream() throws Exception {
    String key = UUID.randomUUID().toString();
    payments.answerNext(503);
    HttpResponse<String> failed = charge(key, CHARGE);
    assertEquals(500, failed.statusCode(), failed.body());

    HttpResponse<String> retried = charge(key, CHARGE);
    assertEquals(201, retried.statusCode(), retried.body());
    assertNull(retried.headers().firstValue("Idempotent-Replayed").orElse(null), "the retry ran, it is no replay");
    // Whatever the payment endpoint did on its 503, both tries carried one key, so it can tell.
    assertEquals(2, paymentsWith(key).size());
  }

  @Test
  void noKey_is400_andAMalformedCharge_is400_withoutPaying() throws Exception {
    int before = payments.received().size();
    HttpResponse<String> keyless = CLIENT.send(HttpRequest.newBuilder(function.url()).timeout(Bounds.CALL)
        .POST(HttpRequest.BodyPublishers.ofString(CHARGE)).build(), HttpResponse.BodyHandlers.ofString());
    HttpResponse<String> malformed = charge(UUID.randomUUID().toString(), "{\"amount\":-5,\"currency\":\"eur\"}");

    assertEquals(400, keyless.statusCode());
    assertEquals("idempotency_key_missing", JSON.readTree(keyless.body()).path("status").asText());
    assertEquals(400, malformed.statusCode());
    assertEquals(before, payments.received().size());
  }

  /** The payments made for the client's key: each carries the function's key for the request, on every try. */
  private static List<Receiver.Received> paymentsWith(String clientKey) {
    String downstream = "http:CreateCharge::" + clientKey;
    return payments.receivedOn("/v1/payments").stream()
        .filter(r -> downstream.equals(r.header("Idempotency-Key"))).toList();
  }

  private static HttpResponse<String> charge(String key, String body)
      throws IOException, InterruptedException {
    return charge(function.url(), key, body);
  }

  private static HttpResponse<String> charge(URI functionUrl, String key, String body)
      throws IOException, InterruptedException {
    HttpRequest request = HttpRequest.newBuilder(URI.create(functionUrl + "charges"))
        .timeout(Bounds.PATIENT.plus(PatientCreateCharge.PAYMENT_TIMEOUT))
        .header("Content-Type", "application/json")
        .header("Idempotency-Key", key)
        .POST(HttpRequest.BodyPublishers.ofString(body))
        .build();
    return CLIENT.send(request, HttpResponse.BodyHandlers.ofString());
  }

  private static HttpResponse<String> send(String key, String body) {
    return send(function.url(), key, body);
  }

  private static HttpResponse<String> send(URI functionUrl, String key, String body) {
    try {
      return charge(functionUrl, key, body);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }
}
