package dev.once.example;

import com.google.cloud.functions.CloudEventsFunction;
import dev.once.entry.EventEntry;
import dev.once.entry.PubSubMessage;
import dev.once.firestore.FirestoreOnce;
import dev.once.guard.Once;
import dev.once.guard.Policy;
import dev.once.http.IdempotentPost;
import dev.once.key.IdempotencyKey;
import io.cloudevents.CloudEvent;

/**
 * A user signed up (a Pub/Sub message: attribute userId, the e-mail to send as its data): one welcome e-mail, POSTed
 * to MAILER_URL at most once per user, however often the message is delivered.
 */
public final class SendWelcome implements CloudEventsFunction {
  private final EventEntry<PubSubMessage> entry;

  public SendWelcome() {
    this(FirestoreOnce.fromEnvironment(), IdempotentPost.toUrlIn("MAILER_URL"));
  }

  SendWelcome(Once once, IdempotentPost mailer) {
    entry = EventEntry.of("SendWelcome", PubSubMessage::from,
        message -> IdempotencyKey.of("welcome", message.attributes().get("userId")), // none: logged, acknowledged
        EventEntry.effect(once, "email", Policy.atMostOnce(), // a try that may have sent it is not repeated
            (message, attempt) -> mailer.send(attempt, "application/json", message.data())));
  }

  @Override
  public void accept(CloudEvent event) {
    entry.accept(event);
  }
}
