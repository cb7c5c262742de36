package dev.once.local.emulator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import org.junit.jupiter.api.Test;

class EmulatorProcessTest {
  @Test
  void sharedFirestoreEmulator_answersAndIsReusedWithinTheJvm() throws Exception {
    FirestoreEmulator first = FirestoreEmulator.shared();
    assertEquals(first, FirestoreEmulator.shared());
    HttpResponse<String> response =
        HttpClient.newHttpClient()
            .send(HttpRequest.newBuilder(URI.create("http://" + first.hostPort() + "/")).build(),
                HttpResponse.BodyHandlers.ofString());
    assertEquals(200, response.statusCode());
    assertFalse(FreePort.isFree(first.port()));
    first.clear("demo-project");
  }

  @Test
  void sharedPubSubEmulator_answers() throws Exception {
    PubSubEmulator emulator = PubSubEmulator.shared();
    HttpResponse<String> response =
        HttpClient.newHttpClient()
            .send(HttpRequest.newBuilder(URI.create("http://" + emulator.hostPort() + "/")).build(),
                HttpResponse.BodyHandlers.ofString());
    assertEquals(200, response.statusCode());
    assertTrue(emulator.pid() > 0);
  }
}
