package dev.once.example;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.cloud.functions.HttpFunction;
import com.google.cloud.functions.HttpRequest;
import com.google.cloud.functions.HttpResponse;
import dev.once.config.Settings;
import dev.once.entry.IdempotentHttp;
import dev.once.entry.IdempotentHttp.Answer;
import dev.once.entry.IdempotentHttp.BadRequest;
import dev.once.guard.Attempt;
import dev.once.guard.Once;
import dev.once.ledger.DocumentWrites;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest.BodyPublishers;
import java.net.http.HttpResponse.BodyHandlers;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * POST {"amount": 1200, "currency": "eur"} with an Idempotency-Key: one payment through PAYMENTS_URL, one
 * document in {@code charges}, 201 with the charge, however often the client retries.
 */
public final class CreateCharge implements HttpFunction {
  private static final ObjectMapper JSON = new ObjectMapper();
  private final HttpClient http = HttpClient.newHttpClient();
  private final URI payments;
  private final Duration timeout;
  private final IdempotentHttp<Charge> guard;

  record Charge(long amount, String currency) {
    static Charge parse(HttpRequest request, byte[] body) throws BadRequest {
      try {
        JsonNode json = JSON.readTree(body);
        Charge charge = new Charge(json.path("amount").asLong(), json.path("currency").asText());
        if (charge.amount > 0 && charge.currency.matches("[a-z]{3}")) {
          return charge;
        }
      } catch (IOException e) {
        // refused below
      }
      throw new BadRequest("send {\"amount\": a positive number of cents, \"currency\": \"eur\"}");
    }
  }

  public CreateCharge() {
    this(Settings.fromEnvironment());
  }

  CreateCharge(Settings settings) {
    payments = URI.create(settings.required(ChargeSetting.PAYMENTS_URL));
    timeout = settings.seconds(ChargeSetting.PAYMENTS_TIMEOUT_SECONDS);
    guard = IdempotentHttp.of("CreateCharge", Once.onFirestore(settings), Charge::parse, this::charge);
  }

  @Override
  public void service(HttpRequest request, HttpResponse response) throws IOException {
    guard.service(request, response);
  }

  /** Runs once per key. A failure releases it, and the retry pays with the same key: the endpoint can tell. */
  private Answer charge(Charge charge, Attempt attempt) throws Exception {
    String id = attempt.key().documentId(); // the same on every try: the charge's id, and the key passed on
    var payment = java.net.http.HttpRequest.newBuilder(payments).timeout(timeout)
        .header("Idempotency-Key", id).header("Content-Type", "application/json")
        .POST(BodyPublishers.ofByteArray(JSON.writeValueAsBytes(charge))).build();
    int status = http.sendAsync(payment, BodyHandlers.discarding())
        .get(timeout.toMillis(), TimeUnit.MILLISECONDS).statusCode();
    if (status >= 500 || status == 409 || status == 429) {
      throw new IOException("the payment endpoint answered " + status); // not stored: our client retries
    }
    if (status >= 400) {
      return Answer.json(402, Map.of("status", "declined", "paymentStatus", status)); // stored, and replayed
    }
    Map<String, Object> charged = Map.of("amount", charge.amount(), "currency", charge.currency(),
        "createdAt", DocumentWrites.serverTime());
    // In the commit that stores the answer. A set, not a create: past the ledger's retention the same key runs
    // again, and must record its answer over the charge of the same id its first run left.
    return Answer.json(201, Map.of("id", id, "amount", charge.amount(), "currency", charge.currency()))
        .committing(writes -> writes.set("charges", id, charged));
  }
}
