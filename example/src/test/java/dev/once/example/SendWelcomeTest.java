package dev.once.example;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.once.http.IdempotentPost;
import dev.once.key.IdempotencyKey;
import dev.once.testing.Events;
import dev.once.testing.Fault;
import dev.once.testing.FaultMatrix;
import dev.once.testing.Faults;
import io.cloudevents.CloudEvent;
import org.junit.jupiter.api.Test;

/** SendWelcome under the test kit's faults: one e-mail per user, never a second request for it. */
class SendWelcomeTest {
  private static final String EMAIL = "{\"to\":\"ada@example.com\",\"template\":\"welcome\"}";

  private static SendWelcome function(Faults faults) {
    return new SendWelcome(faults.once(), IdempotentPost.to(faults.endpoint().uri("/v1/send")));
  }

  @FaultMatrix
  void aSignup_sendsOneWelcome_atMostOnce_howeverItIsDelivered(Faults faults) {
    SendWelcome function = function(faults);
    CloudEvent signup = Events.pubSub().attribute("userId", "u-42").json(EMAIL).build();

    faults.deliver(() -> function.accept(signup));

    assertEquals(1, faults.endpoint().received().size(), "at most once: after a try that may have sent it, none");
    assertEquals("welcome:u-42", faults.endpoint().received().get(0).idempotencyKey());
    assertEquals(EMAIL, faults.endpoint().received().get(0).text());
  }

  /** Two signup messages for one user (the producer published twice): one welcome. */
  @Test
  void twoMessagesForOneUser_sendOneWelcome() {
    try (Faults faults = Faults.of(Fault.REDELIVERED)) {
      SendWelcome function = function(faults);
      faults.deliver(() -> function.accept(Events.pubSub().attribute("userId", "u-7").json(EMAIL).build()));
      faults.deliver(() -> function.accept(Events.pubSub().attribute("userId", "u-7").json(EMAIL).build()));

      faults.expectEffects(1).verify();
      assertEquals(1, faults.endpoint().received().size());
    }
  }

  @Test
  void aMessageThatNamesNoUser_isAcknowledged_andSendsNothing() {
    try (Faults faults = Faults.of(Fault.REDELIVERED)) {
      SendWelcome function = function(faults);
      faults.deliver(() -> function.accept(Events.pubSub().json(EMAIL).build()));

      faults.expectEffects(0).verify();
      assertTrue(faults.endpoint().received().isEmpty());
      assertTrue(faults.ledger().lookup(IdempotencyKey.of("welcome:null"), "email").isEmpty(),
          "no key, no record");
    }
  }
}
