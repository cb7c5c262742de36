package dev.once.example;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.once.http.IdempotentPost;
import dev.once.testing.FakeHttp;
import dev.once.testing.Fault;
import dev.once.testing.FaultMatrix;
import dev.once.testing.Faults;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** CreateCharge under the test kit's faults: paid once, one charge recorded, every retry answered the same. */
class CreateChargeTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String CHARGE = "{\"amount\":1200,\"currency\":\"eur\"}";

  private static CreateCharge function(Faults faults) {
    return new CreateCharge(faults.once(), IdempotentPost.to(faults.endpoint().uri("/v1/payments")));
  }

  @FaultMatrix
  void aCharge_isPaidOnce_andRecordedOnce_whateverHappensToItsTries(Faults faults) throws Exception {
    CreateCharge function = function(faults);

    FakeHttp.Response answer = faults.request(function, () -> FakeHttp.post("/charges", CHARGE).key("order-1"));

    assertEquals(201, answer.status(), answer.text());
    String id = JSON.readTree(answer.body()).path("id").asText();
    assertEquals(Map.of("id", id, "amount", 1200L, "currency", "eur"),
        faults.ledger().document("charges", id).orElseThrow());
    assertEquals("http:CreateCharge::order-1", faults.endpoint().received().get(0).idempotencyKey(),
        "the payment carries the request's key, so the endpoint can tell a retry from a new charge");
  }

  @Test
  void aDeclinedPayment_is402_keptAndReplayed_andPaidNoMore() throws Exception {
    try (Faults faults = Faults.of(Fault.REDELIVERED)) {
      faults.endpoint().answerNext(402);

      FakeHttp.Response answer = faults.request(function(faults), () -> FakeHttp.post("/charges", CHARGE).key("k"));

      assertEquals(402, answer.status());
      assertEquals("declined", JSON.readTree(answer.body()).path("status").asText());
      assertEquals(1, faults.endpoint().received().size(), "the replay asked the endpoint nothing");
      faults.verify();
    }
  }

  @Test
  void aMalformedCharge_is400_andPaysNothing() {
    try (Faults faults = Faults.of(Fault.REDELIVERED)) {
      FakeHttp.Response answer = faults.request(function(faults),
          () -> FakeHttp.post("/charges", "{\"amount\":-5,\"currency\":\"eur\"}").key("k"));

      assertEquals(400, answer.status());
      faults.expectEffects(0).verify();
    }
  }
}
