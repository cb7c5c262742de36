package dev.once.local.stack;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import org.junit.jupiter.api.Test;

class PortsTest {
  @Test
  void defaults_areTheDocumentedBlock() {
    Ports ports = Ports.defaults();
    assertEquals(8681, ports.of(Part.FIRESTORE));
    assertEquals(8682, ports.of(Part.PUBSUB));
    assertEquals(9023, ports.of(Part.STORAGE));
    assertEquals(9090, ports.of(Part.GEMINI));
    assertEquals(9300, ports.of(Part.RELAY));
    assertEquals(9400, ports.of(Part.NOTIFY));
    assertEquals(8081, ports.of(Part.DOCUMENT_UPLOADED));
    assertEquals(8084, ports.of(Part.GEMINI_RECONCILER));
    assertEquals(8085, ports.of(Part.BATCH_COMPLETED));
  }

  @Test
  void eachPort_isMovedByItsVariable_andTheOldEmulatorNamesStillWork() {
    Ports ports = Ports.fromEnvironment(Map.of("ONCE_FIRESTORE_PORT", "18681", "ONCE_GEMINI_WEBHOOK_PORT", " 18083 "));
    assertEquals(18681, ports.of(Part.FIRESTORE));
    assertEquals(18083, ports.of(Part.GEMINI_WEBHOOK));
    assertEquals(8682, ports.of(Part.PUBSUB));
  }

  @Test
  void aValueThatIsNotAPort_namesItsVariable() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Ports.fromEnvironment(Map.of("ONCE_RELAY_PORT", "70000")));
    assertTrue(e.getMessage().contains("ONCE_RELAY_PORT"), e.getMessage());
  }

  @Test
  void twoPartsOnOnePort_isRefusedNamingBoth() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> Ports.fromEnvironment(Map.of("ONCE_NOTIFY_PORT", "9300")));
    assertTrue(e.getMessage().contains("ONCE_RELAY_PORT") && e.getMessage().contains("ONCE_NOTIFY_PORT"),
        e.getMessage());
  }
}
