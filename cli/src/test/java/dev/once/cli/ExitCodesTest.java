package dev.once.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.once.local.emulator.FreePort;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** What every command promises: --help (exit 0, with its exit codes), and one line with exit 2 when Firestore is away. */
class ExitCodesTest {
  static List<List<String>> firestoreCommands() {
    return List.of(List.of("inspect", "pubsub:1"), List.of("stuck"), List.of("release", "pubsub:1", "notify",
        "--reason", "r"), List.of("invalidate", "pubsub:1", "notify", "--reason", "r"), List.of("stats"));
  }

  @ParameterizedTest
  @MethodSource("firestoreCommands")
  void firestoreAway_isOneLine_exit2_noStackTrace(List<String> command) {
    String nobody = "127.0.0.1:" + FreePort.pick();
    OnceRunner.Result result =
        OnceRunner.run(Map.of("FIRESTORE_EMULATOR_HOST", nobody), command.toArray(String[]::new));

    assertEquals(Exit.FIRESTORE, result.status(), result.all());
    assertEquals(1, result.err().strip().lines().count(), result.all());
    assertTrue(result.err().startsWith("once " + command.get(0) + ": no Firestore emulator answers on " + nobody),
        result.all());
    assertFalse(result.err().contains("\tat "), result.all());
    assertEquals("", result.out(), result.all());
  }

  static List<List<String>> everyCommand() {
    return List.of(List.of(), List.of("inspect"), List.of("stuck"), List.of("release"), List.of("invalidate"),
        List.of("redrive"),
        List.of("stats"), List.of("webhook"), List.of("webhook", "register"), List.of("webhook", "rotate"),
        List.of("webhook", "ping"), List.of("webhook", "delete"), List.of("webhook", "list"));
  }

  @ParameterizedTest
  @MethodSource("everyCommand")
  void help_isExit0_andSaysWhatTheExitCodesMean(List<String> command) {
    String[] args = Stream.concat(command.stream(), Stream.of("--help"))
        .toArray(String[]::new);
    OnceRunner.Result result = OnceRunner.run(Map.of(), args);
    assertEquals(Exit.OK, result.status(), result.all());
    assertTrue(result.out().startsWith("Usage: once"), result.all());
    if (command.size() < 2) {
      assertTrue(result.out().contains("Exit codes"), result.all());
    }
  }
}
