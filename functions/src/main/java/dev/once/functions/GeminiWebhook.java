package dev.once.functions;

import com.google.cloud.functions.HttpFunction;
import com.google.cloud.functions.HttpRequest;
import com.google.cloud.functions.HttpResponse;

/** Entry point (skeleton; the flow lands with the functions issue). */
public final class GeminiWebhook implements HttpFunction {
  @Override
  public void service(HttpRequest request, HttpResponse response) {
    response.setStatusCode(501);
  }
}
