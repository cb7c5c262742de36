package dev.once.example;

import com.google.cloud.functions.HttpFunction;
import com.google.cloud.functions.HttpRequest;
import com.google.cloud.functions.HttpResponse;
import dev.once.entry.IdempotentHttp;
import dev.once.entry.IdempotentHttp.Answer;
import dev.once.firestore.FirestoreOnce;
import dev.once.guard.Once;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/** POST a note with an Idempotency-Key: one document in {@code notes}, 201 with its id, however often it is sent. */
public final class CreateNote implements HttpFunction {
  private final Once once = FirestoreOnce.fromEnvironment(); // the environment's settings; connects on first use
  private final IdempotentHttp<String> guard = IdempotentHttp.of("CreateNote", once,
      (request, body) -> new String(body, StandardCharsets.UTF_8),
      (text, attempt) -> {
        String id = attempt.key().documentId(); // the same on every try of this key
        return Answer.json(201, Map.of("id", id)).committing(writes -> writes.set("notes", id, Map.of("text", text)));
      });

  @Override
  public void service(HttpRequest request, HttpResponse response) throws IOException {
    guard.service(request, response);
  }
}
