package dev.once.functions.it;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.once.local.emulator.FreePort;
import dev.once.local.invoker.FunctionProcess;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Fail at deploy, not at the first event: the invoker constructs the function class when it starts, and a function
 * reads its settings then. An instance with a missing or invalid setting never becomes ready (Cloud Run then fails the
 * revision, so `terraform apply` fails), and what it prints names the variable.
 */
class StartupIT {
  /** What Terraform gives DocumentUploaded, without emulators: enough to start, nothing is called. */
  private static Map<String, String> deployed() {
    Map<String, String> env = new HashMap<>();
    env.put("GOOGLE_CLOUD_PROJECT", "once-startup");
    env.put("GEMINI_API_KEY", "k");
    env.put("RESULTS_TOPIC", "results");
    env.put("ANALYSIS_MODE", "sync");
    return env;
  }

  @ParameterizedTest(name = "{0}={1}")
  @CsvSource({"ANALYSIS_MODE, later, ANALYSIS_MODE must be sync or batch, got \"later\"",
      "RESULTS_TOPIC, , RESULTS_TOPIC is not set",
      "ONCE_LEASE_SECONDS, ten, ONCE_LEASE_SECONDS must be a whole number 1 or more",
      "GEMINI_MODEL, gemini-2.0-flash, 'GEMINI_MODEL is gemini-2.0-flash, which Google shut down on 2026-06-01: set it"
          + " to gemini-3.6-flash'"})
  void aBadSetting_keepsTheInstanceFromBecomingReady_andNamesTheVariable(String variable, String value, String told)
      throws IOException {
    Map<String, String> env = deployed();
    if (value == null) {
      env.remove(variable);
    } else {
      env.put(variable, value);
    }
    Path log = Path.of(System.getProperty("once.logDir", "target/it-logs"), "startup-" + variable + ".log");
    Files.deleteIfExists(log);
    FunctionProcess.Launch launch = new FunctionProcess.Launch(Path.of(System.getProperty("once.invokerJar")),
        Path.of(System.getProperty("once.functionJar")), List.of("-XX:TieredStopAtLevel=1"));

    IllegalStateException failed = assertThrows(IllegalStateException.class, () -> FunctionProcess.start(launch,
        "dev.once.functions.DocumentUploaded", FreePort.pick(), env, log).close());

    assertTrue(failed.getMessage().contains("exited"),
        "the instance stopped instead of serving: " + failed.getMessage());
    String printed = Files.readString(log);
    assertTrue(printed.contains(told), "the log names the variable: " + printed);
  }
}
