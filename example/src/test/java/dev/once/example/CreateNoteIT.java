package dev.once.example;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.QueryDocumentSnapshot;
import dev.once.firestore.FirestoreClients;
import dev.once.local.emulator.FirestoreEmulator;
import dev.once.local.invoker.FunctionProcess;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** README's short function, CreateNote, served by the real invoker from the deployable jar, on the emulator. */
class CreateNoteIT {
  private static final String PROJECT = "once-note-it";
  private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private static FunctionProcess function;
  private static Firestore db;

  @BeforeAll
  static void start() {
    FirestoreEmulator emulator = FirestoreEmulator.shared();
    function = Served.start(CreateNote.class,
        Map.of("GOOGLE_CLOUD_PROJECT", PROJECT, "FIRESTORE_EMULATOR_HOST", emulator.hostPort()));
    db = FirestoreClients.forEmulator(PROJECT, emulator.hostPort());
  }

  @AfterAll
  static void stop() throws Exception {
    if (function != null) {
      function.close();
    }
    if (db != null) {
      db.close();
    }
  }

  @Test
  void aNoteSentThreeTimesWithOneKey_isStoredOnce_andAnsweredTheSame() throws Exception {
    String key = UUID.randomUUID().toString();
    String text = "buy milk " + key;
    HttpResponse<String> first = post(key, text);
    assertEquals(201, first.statusCode(), first.body());
    for (int i = 0; i < 2; i++) {
      HttpResponse<String> again = post(key, text);
      assertEquals(201, again.statusCode());
      assertEquals(first.body(), again.body());
      assertEquals("true", again.headers().firstValue("Idempotent-Replayed").orElse(null));
    }

    String id = new ObjectMapper().readTree(first.body()).path("id").asText();
    List<QueryDocumentSnapshot> notes = db.collection("notes").whereEqualTo("text", text).get()
        .get(30, TimeUnit.SECONDS).getDocuments();
    assertEquals(1, notes.size(), "one note for three requests");
    assertEquals(id, notes.get(0).getId());
    assertTrue(post(UUID.randomUUID().toString(), text).statusCode() == 201, "another key is another note");
  }

  private static HttpResponse<String> post(String key, String text) throws Exception {
    HttpRequest request = HttpRequest.newBuilder(URI.create(function.url() + "notes")).timeout(Duration.ofSeconds(60))
        .header("Idempotency-Key", key).POST(HttpRequest.BodyPublishers.ofString(text)).build();
    return CLIENT.send(request, HttpResponse.BodyHandlers.ofString());
  }
}
