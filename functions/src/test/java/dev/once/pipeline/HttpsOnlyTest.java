package dev.once.pipeline;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.util.List;
import org.junit.jupiter.api.Test;

/** https only; plain http to this machine alone, for local runs and tests (a name is never resolved for that). */
class HttpsOnlyTest {
  @Test
  void onlyHttpsEndpoints_orHttpToThisMachine_areAccepted() {
    for (String refused : List.of("ftp://x/", "http://example.com/notify", "http://10.0.0.1/",
        "http://127.0.0.1.nip.io/",
        "http://localhost.example.com/", "https:///nohost")) {
      assertFalse(HttpsOnly.allows(URI.create(refused)), refused);
    }
    for (String accepted : List.of("https://example.com/notify", "http://127.0.0.1:9400/notify", "http://localhost:1/",
        "http://[::1]:8080/", "http://127.1.2.3/")) {
      assertTrue(HttpsOnly.allows(URI.create(accepted)), accepted);
    }
  }
}
