package dev.once.gemini;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.genai.errors.ClientException;
import com.google.genai.errors.ServerException;
import dev.once.config.InvalidSetting;
import dev.once.local.gemini.GeminiFixtures;
import dev.once.observe.Log;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.LocalDate;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What an instance says when Google moves its models: at start, at an answer from another model, at a refusal. */
class ModelWatchTest {
  private static final LocalDate TODAY = LocalDate.of(2026, 12, 6);
  private final ByteArrayOutputStream lines = new ByteArrayOutputStream();
  private final ModelWatch watch = new ModelWatch(Log.to(new PrintStream(lines, true, StandardCharsets.UTF_8)));

  private List<String> lines() {
    return Arrays.stream(lines.toString(StandardCharsets.UTF_8).split("\n")).filter(l -> !l.isBlank()).toList();
  }

  @Test
  void aModelGoogleShutDown_failsTheStart_namingItsReplacement() {
    InvalidSetting e = assertThrows(InvalidSetting.class, () -> watch.check("gemini-2.0-flash", TODAY));
    assertTrue(e.getMessage().startsWith("GEMINI_MODEL"), e.getMessage());
    assertTrue(
        e.getMessage().startsWith("GEMINI_MODEL is gemini-2.0-flash, which Google shut down on 2026-06-01: set it"
            + " to gemini-3.6-flash, Google's replacement"),
        e.getMessage());
    assertThrows(InvalidSetting.class, () -> watch.check("gemini-3.1-flash-lite", LocalDate.of(2027, 5, 7)));
  }

  @Test
  void aModelClosedRoutedShuttingDownSoonOrUnknown_startsWithOneWarning() {
    for (String model : List.of("gemini-2.5-flash", "gemini-3.7-flash", "house-model")) {
      watch.check(model, TODAY);
      watch.check(model, TODAY);
    }
    watch.check("gemini-3.1-flash-lite", TODAY); // 152 days before its shutdown: nothing to say yet
    watch.check("gemini-3.1-flash-lite", LocalDate.of(2027, 2, 6)); // 90 days before
    watch.check("gemini-3.5-flash-lite", TODAY);
    List<String> said = lines();
    assertEquals(4, said.size(), said.toString());
    said.forEach(
        line -> assertTrue(line.contains("\"severity\":\"WARNING\"") && line.contains(ModelWatch.LIFECYCLE), line));
    assertTrue(said.get(0).contains("closed to new projects since 2026-09-18"), said.get(0));
    assertTrue(said.get(1).contains("Google answers it with gemini-3.8-flash"), said.get(1));
    assertTrue(said.get(2).contains("not in the built-in catalog"), said.get(2));
    assertTrue(said.get(3).contains("until Google shuts it down on 2027-05-07"), said.get(3));
  }

  @Test
  void anAnswerFromAnotherModel_isSaidOncePerPair() {
    Analysis routed = new Analysis("gemini-3.7-flash", "gemini-3.8-flash", Map.of(), null, Usage.NONE, null);
    watch.answered(routed);
    watch.answered(routed);
    watch.answered(new Analysis("gemini-3.8-flash", "gemini-3.8-flash-001", Map.of(), null, Usage.NONE, null));
    watch.answered(new Analysis("gemini-flash-latest", "gemini-3.6-flash", Map.of(), null, Usage.NONE, null));
    watch.answered(new Analysis("gemini-3.5-flash", "gemini-3.5-flash-lite", Map.of(), null, Usage.NONE, null));
    List<String> said = lines();
    assertEquals(2, said.size(), said.toString());
    assertTrue(said.get(0).contains(ModelWatch.REROUTED) && said.get(0).contains("\"answered\":\"gemini-3.8-flash\""),
        said.get(0));
    assertTrue(said.get(1).contains("\"requested\":\"gemini-3.5-flash\""), said.get(1));
  }

  @Test
  void googlesNotFoundForTheModel_isOneErrorLine_andNothingElseIs() {
    for (String fixture : List.of("error-404-adk-docs-pr1840.json", "error-404-no-longer-available-new-users.json",
        "error-404-interactions-hint.json", "error-404-model-not-found-unknown-id.json")) {
      ClientException refused = new ClientException(404, "NOT_FOUND",
          GeminiFixtures.json(fixture).at("/error/message").asText());
      assertTrue(GeminiErrors.modelUnavailable(refused), fixture);
      RuntimeException thrown = watch.failed("gemini-2.5-flash", refused);
      assertEquals(refused, thrown.getCause());
      assertTrue(ModelUnavailable.says(GeminiErrors.describe(thrown)), GeminiErrors.describe(thrown));
      assertTrue(GeminiErrors.refusedBeforeWork(thrown) && GeminiErrors.certainlyNotCreated(thrown),
          "nothing was done: not counted, no job made");
    }
    ServerException overloaded = new ServerException(503, "UNAVAILABLE", "overloaded");
    assertEquals(overloaded, watch.failed("gemini-2.5-flash", overloaded));
    watch.failed("gemini-3.8-flash", new ServerException(500, "INTERNAL", "boom"));
    List<String> said = lines();
    assertEquals(1, said.size(), said.toString());
    assertTrue(said.get(0).contains("\"severity\":\"ERROR\"") && said.get(0).contains(ModelWatch.UNAVAILABLE)
        && said.get(0).contains("no longer available"), said.get(0));
  }
}
