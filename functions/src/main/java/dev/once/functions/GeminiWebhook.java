package dev.once.functions;

import com.google.cloud.functions.HttpFunction;
import com.google.cloud.functions.HttpRequest;
import com.google.cloud.functions.HttpResponse;
import dev.once.entry.HttpAnswer;
import dev.once.functions.webhook.WebhookHandler;
import dev.once.observe.Trace;
import java.io.IOException;

/**
 * Entry point for the Gemini API webhook (HTTP, public: it checks signatures itself; see WebhookHandler). Its
 * settings, those of its static and dynamic webhook configurations among them, are checked when the instance starts.
 * The one public function holds the least: it reads the ledger and publishes hand-offs, and has no Gemini key.
 */
public final class GeminiWebhook implements HttpFunction {
  static final String NAME = "GeminiWebhook";
  private final WebhookHandler handler;

  public GeminiWebhook() {
    this(Clients.instance());
  }

  GeminiWebhook(Clients clients) {
    handler = Wiring.webhookHandler(NAME, clients);
  }

  @Override
  public void service(HttpRequest request, HttpResponse response) throws IOException {
    Trace.within(HttpAnswer.traceOf(request), () -> {
      handler.service(request, response);
      return null;
    });
  }
}
