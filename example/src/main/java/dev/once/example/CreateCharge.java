package dev.once.example;

import com.google.cloud.functions.HttpFunction;
import com.google.cloud.functions.HttpRequest;
import com.google.cloud.functions.HttpResponse;
import dev.once.entry.IdempotentHttp;
import dev.once.entry.IdempotentHttp.Answer;
import dev.once.firestore.FirestoreOnce;
import dev.once.guard.Once;
import dev.once.http.IdempotentPost;
import dev.once.http.IdempotentPost.Response;
import java.io.IOException;
import java.util.Map;

/** A charge, POSTed as {"amount": 1200, "currency": "eur"}: paid once per Idempotency-Key, however often it is sent. */
public final class CreateCharge implements HttpFunction {
  private final IdempotentHttp<Charge> guard;

  record Charge(long amount, String currency) {}

  public CreateCharge() {
    this(FirestoreOnce.fromEnvironment(), IdempotentPost.toUrlIn("PAYMENTS_URL"));
  }

  CreateCharge(Once once, IdempotentPost payments) {
    guard = IdempotentHttp.of("CreateCharge", once, IdempotentHttp.json(Charge.class,
        charge -> charge.amount() > 0 && String.valueOf(charge.currency()).matches("[a-z]{3}"),
        "send {\"amount\": a positive number of cents, \"currency\": \"eur\"}"), (charge, attempt) -> {
          Response paid = payments.postJson(attempt, charge); // with this request's key, on every try: paid once
          String id = attempt.key().documentId(); // the same on every try of this key
          Map<String, Object> charged = Map.of("id", id, "amount", charge.amount(), "currency", charge.currency());
          return paid.ok() ? Answer.json(201, charged).committing(writes -> writes.set("charges", id, charged))
              : Answer.json(402, Map.of("status", "declined", "paymentStatus", paid.status())); // kept, replayed
        });
  }

  @Override
  public void service(HttpRequest request, HttpResponse response) throws IOException {
    guard.service(request, response);
  }
}
