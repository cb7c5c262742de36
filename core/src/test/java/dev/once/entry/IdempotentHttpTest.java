package dev.once.entry;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.cloud.functions.HttpRequest;
import dev.once.entry.IdempotentHttp.Answer;
import dev.once.entry.IdempotentHttp.BadRequest;
import dev.once.guard.Attempt;
import dev.once.guard.Once;
import dev.once.guard.Policy;
import dev.once.guard.Refusal;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.RecordState;
import dev.once.ledger.SideWrites;
import dev.once.observe.Log;
import dev.once.testing.FakeHttp;
import dev.once.testing.InMemoryLedger;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Test;

/** The Idempotency-Key guard against the in-memory ledger: what a client sees, and what the ledger keeps. */
class IdempotentHttpTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String CHARGE = "{\"amount\":1200}";

  private final InMemoryLedger ledger = new InMemoryLedger();
  private final ByteArrayOutputStream logged = new ByteArrayOutputStream();
  private final Once once = new Once(ledger).loggingTo(Log.to(new PrintStream(logged, true, StandardCharsets.UTF_8)));
  private final AtomicInteger runs = new AtomicInteger();
  /** What the handler answers on its next runs (then 201 with the charge). */
  private final List<Integer> statuses = new CopyOnWriteArrayList<>();
  private final IdempotentHttp<Long> guard = IdempotentHttp.of("Pay", once, IdempotentHttpTest::amount, this::charge);

  static Long amount(HttpRequest request, byte[] body) throws BadRequest {
    try {
      JsonNode amount = JSON.readTree(body).path("amount");
      if (amount.canConvertToLong() && amount.asLong() > 0) {
        return amount.asLong();
      }
    } catch (IOException e) {
      // answered below
    }
    throw new BadRequest("the body is not {\"amount\": a positive whole number}");
  }

  private Answer charge(Long amount, Attempt attempt) {
    runs.incrementAndGet();
    String id = attempt.key().documentId();
    if (!statuses.isEmpty()) {
      int status = statuses.remove(0);
      return Answer.json(status, Map.of("status", "declined_or_failed"));
    }
    return Answer.json(201, Map.of("id", id, "amount", amount))
        .committing(writes -> writes.create("charges", id, Map.of("amount", amount)));
  }

  private FakeHttp.Response send(IdempotentHttp<Long> to, FakeHttp.Request request) throws IOException {
    FakeHttp.Response response = new FakeHttp.Response();
    to.service(request, response);
    return response;
  }

  private FakeHttp.Response send(FakeHttp.Request request) throws IOException {
    return send(guard, request);
  }

  private static FakeHttp.Request pay(String key, String body) {
    return FakeHttp.post("/charges", body).key(key);
  }

  private static JsonNode json(FakeHttp.Response response) throws IOException {
    return JSON.readTree(response.body());
  }

  @Test
  void theFirstRequest_runsTheHandler_andItsAnswerIsStoredWithItsWritesInOneCommit() throws IOException {
    FakeHttp.Response first = send(pay("k-1", CHARGE));

    assertEquals(201, first.status());
    assertEquals("application/json", first.getContentType().orElseThrow());
    assertEquals(1200, json(first).path("amount").asLong());
    assertNull(first.header("Idempotent-Replayed"), "the original is not a replay");
    IdempotencyKey key = IdempotencyKey.of("http:Pay::k-1");
    var record = ledger.lookup(key, IdempotentHttp.EFFECT).orElseThrow();
    assertEquals(RecordState.DONE, record.state());
    assertEquals(201L, record.outcome().get("status"));
    assertEquals(first.text(), record.outcome().get("body"));
    assertEquals(Map.of("amount", 1200L), ledger.document("charges", key.documentId()).orElseThrow());
  }

  @Test
  void retriesWithTheSameKeyAndRequest_getTheStoredAnswer_markedAsAReplay_andTheHandlerRunsOnce() throws IOException {
    FakeHttp.Response first = send(pay("k-2", CHARGE));
    for (int i = 0; i < 5; i++) {
      FakeHttp.Response retry = send(pay("k-2", CHARGE));
      assertEquals(first.status(), retry.status());
      assertEquals(first.getContentType(), retry.getContentType());
      assertArrayEquals(first.body(), retry.body());
      assertEquals("true", retry.header("Idempotent-Replayed"));
    }
    assertEquals(1, runs.get());
    assertEquals(1, ledger.collection("charges").size());
  }

  @Test
  void aHandlerThatDefers_is503WithRetryAfter_andTheSameKeyRunsItLater() throws IOException {
    boolean[] overBudget = {true};
    IdempotentHttp<Long> waiting = IdempotentHttp.of("Pay", once, IdempotentHttpTest::amount, (amount, attempt) -> {
      if (overBudget[0]) {
        throw Refusal.deferred("over the day's budget", SideWrites.NONE);
      }
      return charge(amount, attempt);
    });
    FakeHttp.Response deferred = send(waiting, pay("k-defer", CHARGE));
    assertEquals(503, deferred.status());
    assertEquals("60", deferred.header("Retry-After"));
    assertEquals("deferred", json(deferred).path("status").asText());
    assertEquals(0, runs.get());

    overBudget[0] = false;
    assertEquals(201, send(waiting, pay("k-defer", CHARGE)).status());
    assertEquals(1, runs.get());
  }

  @Test
  void aHandlerWaitingForAnotherHolder_answers409InFlight_andRunsOnceItIsFree() throws IOException {
    boolean[] held = {true};
    IdempotentHttp<Long> waiting = IdempotentHttp.of("Pay", once, IdempotentHttpTest::amount, (amount, attempt) -> {
      if (held[0]) {
        throw Refusal.inFlight("the account is being charged by another request", Instant.now());
      }
      return charge(amount, attempt);
    });
    FakeHttp.Response inFlight = send(waiting, pay("k-wait", CHARGE));
    assertEquals(409, inFlight.status());
    assertEquals("in_flight", json(inFlight).path("status").asText());
    assertEquals(0, runs.get());

    held[0] = false;
    assertEquals(201, send(waiting, pay("k-wait", CHARGE)).status());
    assertEquals(1, runs.get());
  }

  @Test
  void theDraftsQuotedForm_isTheSameKeyAsTheBareOne() throws IOException {
    send(pay("k-3", CHARGE));
    FakeHttp.Response quoted = send(pay("\"k-3\"", CHARGE));

    assertEquals("true", quoted.header("Idempotent-Replayed"));
    assertEquals(1, runs.get());
  }

  @Test
  void aRetryWhileTheFirstIsInFlight_is409_withRetryAfter_andRunsNothing() throws Exception {
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch proceed = new CountDownLatch(1);
    IdempotentHttp<Long> slow = IdempotentHttp.of("Pay", once, IdempotentHttpTest::amount, (amount, attempt) -> {
      entered.countDown();
      assertTrue(proceed.await(10, TimeUnit.SECONDS), "the test let the first request go on");
      return charge(amount, attempt);
    });
    CompletableFuture<FakeHttp.Response> first = CompletableFuture.supplyAsync(() -> {
      try {
        return send(slow, pay("k-4", CHARGE));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    });
    assertTrue(entered.await(10, TimeUnit.SECONDS), "the first request reached the handler");

    FakeHttp.Response second = send(slow, pay("k-4", CHARGE));
    assertEquals(409, second.status());
    assertEquals("1", second.header("Retry-After"));
    assertEquals("in_flight", json(second).path("status").asText());

    proceed.countDown();
    assertEquals(201, first.get(10, TimeUnit.SECONDS).status());
    assertEquals("true", send(slow, pay("k-4", CHARGE)).header("Idempotent-Replayed"));
    assertEquals(1, runs.get());
  }

  @Test
  void theSameKeyWithAnotherRequest_is422_whetherBodyPathQueryOrMethodDiffers() throws IOException {
    send(pay("k-5", CHARGE));

    List<FakeHttp.Request> others = List.of(
        pay("k-5", "{\"amount\":9900}"),
        pay("k-5", "{ \"amount\":1200}"), // the bytes are compared, not the JSON's meaning
        FakeHttp.post("/refunds", CHARGE).key("k-5"),
        new FakeHttp.Request("POST", "/charges", "currency=eur", CHARGE.getBytes(StandardCharsets.UTF_8)).key("k-5"),
        new FakeHttp.Request("PATCH", "/charges", null, CHARGE.getBytes(StandardCharsets.UTF_8)).key("k-5"));
    for (FakeHttp.Request other : others) {
      FakeHttp.Response refused = send(other);
      assertEquals(422, refused.status());
      assertEquals("idempotency_key_reused", json(refused).path("status").asText());
    }
    assertEquals(1, runs.get());
  }

  @Test
  void noKey_orAMalformedOne_is400_andNothingIsClaimed() throws IOException {
    List<FakeHttp.Request> bad = List.of(
        FakeHttp.post("/charges", CHARGE),
        pay("", CHARGE),
        pay("has space", CHARGE),
        pay("x".repeat(IdempotentHttp.MAX_KEY_CHARS + 1), CHARGE),
        pay("\"a\\\"b\"", CHARGE),
        pay("naïve", CHARGE),
        pay("k-6", CHARGE).key("k-7"));
    for (FakeHttp.Request request : bad) {
      FakeHttp.Response refused = send(request);
      assertEquals(400, refused.status(), request.getHeaders().toString());
      assertTrue(json(refused).path("status").asText().startsWith("idempotency_key_"));
    }
    assertEquals(0, runs.get());
    assertEquals(201, send(pay("x".repeat(IdempotentHttp.MAX_KEY_CHARS), CHARGE)).status());
  }

  /** Answered before its body is read, the connection is closed, and the answer says so: no client reuses it. */
  @Test
  void aRefusalBeforeTheBodyIsRead_closesTheConnection_andAnAnswerAfterItDoesNot() throws IOException {
    assertEquals("close", send(FakeHttp.post("/charges", CHARGE)).header("Connection"), "no key");
    assertEquals("close", send(pay("has space", CHARGE)).header("Connection"), "a malformed key");
    assertEquals(null, send(pay("k-9", "{\"amount\":\"lots\"}")).header("Connection"), "read, then refused");
    assertEquals(null, send(pay("k-10", CHARGE)).header("Connection"), "read, then run");
  }

  @Test
  void aRequestTheParserRefuses_is400_andTheKeyStaysFreeForTheCorrectedOne() throws IOException {
    FakeHttp.Response refused = send(pay("k-8", "{\"amount\":\"lots\"}"));
    assertEquals(400, refused.status());
    assertEquals("malformed", json(refused).path("status").asText());
    assertTrue(ledger.lookup(IdempotencyKey.of("http:Pay::k-8"), IdempotentHttp.EFFECT).isEmpty());

    assertEquals(201, send(pay("k-8", CHARGE)).status(), "the corrected request runs, it is not a 422");
  }

  @Test
  void a5xxAnswer_isSentButNotStored_andReleasesTheKey_soTheRetryRunsAgain() throws IOException {
    statuses.add(503);
    FakeHttp.Response failed = send(pay("k-9", CHARGE));
    assertEquals(503, failed.status());
    assertNull(failed.header("Idempotent-Replayed"));
    assertEquals(0, ledger.collection("charges").size(), "a 5xx answer commits no writes");

    FakeHttp.Response retried = send(pay("k-9", CHARGE));
    assertEquals(201, retried.status());
    assertNull(retried.header("Idempotent-Replayed"));
    assertEquals(2, runs.get());
    assertEquals(2, ledger.lookup(IdempotencyKey.of("http:Pay::k-9"), IdempotentHttp.EFFECT).orElseThrow().attempts());
  }

  @Test
  void anExceptionFromTheHandler_is500WithoutDetails_andTheRetryRunsAgain() throws IOException {
    AtomicInteger calls = new AtomicInteger();
    IdempotentHttp<Long> flaky = IdempotentHttp.of("Pay", once, IdempotentHttpTest::amount, (amount, attempt) -> {
      if (calls.incrementAndGet() == 1) {
        throw new IOException("connection reset by the payment endpoint at 10.0.0.7");
      }
      return charge(amount, attempt);
    });

    FakeHttp.Response failed = send(flaky, pay("k-10", CHARGE));
    assertEquals(500, failed.status());
    assertEquals("failed", json(failed).path("status").asText());
    assertTrue(!failed.text().contains("10.0.0.7"), "no internals in the answer");
    assertEquals(201, send(flaky, pay("k-10", CHARGE)).status());
    assertEquals(2, calls.get());
  }

  @Test
  void a4xxAnswer_isTheRequestsOutcome_storedAndReplayed() throws IOException {
    statuses.add(402);
    FakeHttp.Response declined = send(pay("k-11", CHARGE));
    FakeHttp.Response again = send(pay("k-11", CHARGE));

    assertEquals(402, declined.status());
    assertEquals(402, again.status());
    assertArrayEquals(declined.body(), again.body());
    assertEquals("true", again.header("Idempotent-Replayed"));
    assertEquals(1, runs.get());
  }

  @Test
  void aBinaryBody_isStoredInBase64_andReplayedByteForByte() throws IOException {
    byte[] png = {(byte) 0x89, 'P', 'N', 'G', 0, (byte) 0xff, (byte) 0xfe};
    IdempotentHttp<Long> image = IdempotentHttp.of("Pay", once, IdempotentHttpTest::amount,
        (amount, attempt) -> Answer.of(200, "image/png", png));

    send(image, pay("k-12", CHARGE));
    FakeHttp.Response replay = send(image, pay("k-12", CHARGE));

    assertArrayEquals(png, replay.body());
    assertEquals("image/png", replay.getContentType().orElseThrow());
    assertTrue(ledger.lookup(IdempotencyKey.of("http:Pay::k-12"), IdempotentHttp.EFFECT).orElseThrow().outcome()
        .containsKey("bodyBase64"));
  }

  @Test
  void anAnswerOverTheStoredBound_isSentWhole_andReplayedWithItsStatusAndANoteInsteadOfTheBody() throws IOException {
    byte[] big = new byte[IdempotentHttp.MAX_STORED_BODY_BYTES + 1];
    Arrays.fill(big, (byte) 'a');
    IdempotentHttp<Long> large = IdempotentHttp.of("Pay", once, IdempotentHttpTest::amount,
        (amount, attempt) -> Answer.of(201, "text/plain", big)
            .committing(writes -> writes.create("charges", attempt.key().documentId(), Map.of("amount", amount))));

    FakeHttp.Response first = send(large, pay("k-13", CHARGE));
    assertArrayEquals(big, first.body());
    FakeHttp.Response replay = send(large, pay("k-13", CHARGE));

    assertEquals(201, replay.status());
    assertEquals("true", replay.header("Idempotent-Replayed"));
    assertEquals("body_not_stored", json(replay).path("status").asText());
    assertEquals(big.length, json(replay).path("bodyBytes").asLong());
    assertEquals(1, ledger.collection("charges").size(), "the effect's writes are committed all the same");
  }

  @Test
  void anAnswerAtTheStoredBound_isReplayedWhole() throws IOException {
    byte[] atBound = new byte[IdempotentHttp.MAX_STORED_BODY_BYTES];
    Arrays.fill(atBound, (byte) 'b');
    IdempotentHttp<Long> large = IdempotentHttp.of("Pay", once, IdempotentHttpTest::amount,
        (amount, attempt) -> Answer.of(201, "text/plain", atBound));

    send(large, pay("k-14", CHARGE));
    assertArrayEquals(atBound, send(large, pay("k-14", CHARGE)).body());
  }

  @Test
  void twoFunctions_neverShareAKey() throws IOException {
    IdempotentHttp<Long> other = IdempotentHttp.of("Refund", once, IdempotentHttpTest::amount, this::charge);

    FakeHttp.Response paid = send(pay("k-15", CHARGE));
    FakeHttp.Response refunded = send(other, pay("k-15", CHARGE));

    assertEquals(201, paid.status());
    assertEquals(201, refunded.status());
    assertNull(refunded.header("Idempotent-Replayed"));
    assertEquals(2, runs.get());
    assertTrue(ledger.lookup(IdempotencyKey.of("http:Refund::k-15"), IdempotentHttp.EFFECT).isPresent());
  }

  @Test
  void scopedByCaller_twoCallersNeverShareAKey_andARequestWithNoCallerIs401() throws IOException {
    IdempotentHttp<Long> perCaller = guard.scopedBy(request -> request.getFirstHeader("X-Caller").orElse(null));

    assertEquals(201, send(perCaller, pay("k-16", CHARGE).header("X-Caller", "alice")).status());
    FakeHttp.Response bob = send(perCaller, pay("k-16", CHARGE).header("X-Caller", "bob"));
    FakeHttp.Response aliceAgain = send(perCaller, pay("k-16", CHARGE).header("X-Caller", "alice"));
    FakeHttp.Response nobody = send(perCaller, pay("k-16", CHARGE));

    assertNull(bob.header("Idempotent-Replayed"), "bob's request is his own");
    assertEquals("true", aliceAgain.header("Idempotent-Replayed"));
    assertEquals(401, nobody.status());
    assertEquals(2, runs.get());
  }

  @Test
  void methodsOtherThanPostAndPatch_are405_andBodiesOverTheBound_are413() throws IOException {
    FakeHttp.Response get = send(new FakeHttp.Request("GET", "/charges", null, new byte[0]).key("k-17"));
    assertEquals(405, get.status());
    assertEquals("POST, PATCH", get.header("Allow"));

    byte[] huge = new byte[IdempotentHttp.MAX_REQUEST_BYTES + 1];
    assertEquals(413, send(new FakeHttp.Request("POST", "/charges", null, huge).key("k-17")).status());
    assertEquals(0, runs.get());
  }

  @Test
  void eachRequest_logsOneLine_labelledWithItsOutcome() throws IOException {
    send(pay("k-18", CHARGE));
    send(pay("k-18", CHARGE));
    send(pay("k-18", "{\"amount\":1}"));
    statuses.add(500);
    send(pay("k-19", CHARGE));
    send(FakeHttp.post("/charges", CHARGE));

    List<JsonNode> lines = logged.toString(StandardCharsets.UTF_8).lines().map(IdempotentHttpTest::parse)
        .filter(line -> line.path("message").asText().startsWith("Pay ")).toList();
    assertEquals(List.of("processed", "duplicate", "conflict", "failed", "rejected"),
        lines.stream().map(line -> line.path("outcome").asText()).toList());
    assertEquals(List.of(201, 201, 422, 500), lines.subList(0, 4).stream().map(l -> l.path("status").asInt()).toList());
    assertEquals("request", lines.get(0).path(Log.LABELS).path("effect").asText());
  }

  private static JsonNode parse(String line) {
    try {
      return JSON.readTree(line);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Test
  void atMostOnce_aRequestWhoseHandlerMayHaveActed_isNotRunAgain_butRefusedForGood() throws IOException {
    IdempotentHttp<Long> once = guard.withPolicy(Policy.atMostOnce());
    IdempotentHttp<Long> failing =
        IdempotentHttp.of("Pay", this.once, IdempotentHttpTest::amount, (amount, attempt) -> {
          runs.incrementAndGet();
          throw new IOException("the payment endpoint timed out: it may have paid");
        }).withPolicy(Policy.atMostOnce());

    assertEquals(500, send(failing, pay("k-1", CHARGE)).status());
    FakeHttp.Response retried = send(once, pay("k-1", CHARGE));

    assertEquals(500, retried.status());
    assertEquals("rejected", JSON.readTree(retried.body()).path("status").asText());
    assertEquals(1, runs.get(), "never a second try");
  }

  @Test
  void aJsonParser_readsARecord_andRefusesWhatItCannotReadOrWhatItsCheckRejects() throws Exception {
    record Order(String item, long quantity) {}
    IdempotentHttp.Parser<Order> parser = IdempotentHttp.json(Order.class, order -> order.quantity() > 0,
        "send {\"item\": a name, \"quantity\": at least 1}");
    assertEquals(new Order("pen", 2), parser.parse(null, "{\"item\":\"pen\",\"quantity\":2}".getBytes()));
    for (String bad : new String[] {"", "{", "[]", "{\"item\":\"pen\",\"quantity\":0}",
        "{\"item\":\"pen\",\"quantity\":2,\"x\":1}"}) {
      BadRequest refused = Assertions.assertThrows(BadRequest.class,
          () -> parser.parse(null, bad.getBytes()), bad);
      assertEquals("send {\"item\": a name, \"quantity\": at least 1}", refused.getMessage());
    }
  }
}
