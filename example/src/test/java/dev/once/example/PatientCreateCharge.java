package dev.once.example;

import com.google.cloud.functions.HttpFunction;
import com.google.cloud.functions.HttpRequest;
import com.google.cloud.functions.HttpResponse;
import dev.once.firestore.FirestoreOnce;
import dev.once.http.IdempotentPost;
import java.io.IOException;
import java.time.Duration;

/**
 * {@link CreateCharge}, its payment POST bounded by minutes instead of IdempotentPost's 10 s: served for the test that
 * holds a payment in flight for as long as it needs (CreateChargeIT), so its request stays in flight however slow the
 * machine, where a 10 s bound made the in-flight window a guess. Everything else is CreateCharge's own code.
 */
public final class PatientCreateCharge implements HttpFunction {
  static final Duration PAYMENT_TIMEOUT = Duration.ofMinutes(5);
  private final CreateCharge charge =
      new CreateCharge(FirestoreOnce.fromEnvironment(),
          IdempotentPost.toUrlIn("PAYMENTS_URL").withTimeout(PAYMENT_TIMEOUT));

  @Override
  public void service(HttpRequest request, HttpResponse response) throws IOException {
    charge.service(request, response);
  }
}
