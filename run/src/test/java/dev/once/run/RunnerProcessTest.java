package dev.once.run;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.QueryDocumentSnapshot;
import com.google.genai.Client;
import dev.once.config.Settings;
import dev.once.firestore.FirestoreClients;
import dev.once.gemini.GeminiClients;
import dev.once.gemini.GeminiModels;
import dev.once.local.Await;
import dev.once.local.Bounds;
import dev.once.local.process.Jvm;
import dev.once.local.samples.InvoicePdf;
import dev.once.local.stack.Part;
import dev.once.local.stack.Ports;
import dev.once.local.stack.Topology;
import dev.once.local.storage.GcloudStorage;
import dev.once.pipeline.RecordWrites;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * {@code dev/run} as its own process, exactly as the script starts it (the same main, the same classpath): it starts
 * the stack, prints the table and the combined log, refuses a second runner, serves {@code dev/demo}, takes a PDF
 * uploaded with {@code gcloud storage} and the variables it prints, and on SIGTERM (what Ctrl-C does) stops every
 * process it started and removes its lock.
 */
class RunnerProcessTest {
  private static final Path LOGS = Path.of(System.getProperty("once.logDir", "target/test-run"));
  private static final Set<String> FINAL = Set.of("analysed", "failed", "rejected");

  private static ProcessBuilder runner(Path logDir, Map<String, String> env, String... options) {
    List<String> command = new ArrayList<>(List.of(Jvm.java(), "-Xmx512m",
        "-Donce.functionJar=" + System.getProperty("once.functionJar"),
        "-Donce.invokerJar=" + System.getProperty("once.invokerJar"),
        "-cp", System.getProperty("java.class.path"), LocalPipeline.class.getName(), "--log-dir", logDir.toString()));
    command.addAll(List.of(options));
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
    // A developer's own key must not make this test call the real Gemini API.
    builder.environment().remove("GEMINI_API_KEY");
    builder.environment().putAll(env);
    return builder;
  }

  private static String read(Path file) {
    try {
      return Files.exists(file) ? Files.readString(file) : "";
    } catch (IOException e) {
      return "";
    }
  }

  private static boolean alive(long pid) {
    return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
  }

  @Test
  void runner_startsEverything_refusesASecondRunner_servesTheDemoAndGcloud_andLeavesNothingBehindOnSigterm()
      throws Exception {
    Path logDir = LOGS.resolve("runner-" + System.nanoTime());
    Files.createDirectories(logDir);
    Path output = logDir.resolve("runner.out");
    Ports ports = Ports.free();
    Process runner = runner(logDir, ports.asEnvironment()).redirectOutput(output.toFile()).start();
    try {
      Await.until(Bounds.START, () -> {
        if (!runner.isAlive()) {
          throw new AssertionError("dev/run exited with " + runner.exitValue() + ":\n" + read(output));
        }
        return read(output).contains("ready. Combined log below");
      }, "dev/run to start everything (see " + output + ")");
      String table = read(output);
      for (Part part : Part.values()) {
        assertTrue(table.contains(part.title()), part.title() + " in the table:\n" + table);
      }
      assertTrue(table.contains(ports.url(Part.DOCUMENT_UPLOADED) + "/"), table);
      assertEquals(runner.pid(), StackInfo.read(RunLock.file(logDir)).orElseThrow().pid(), "the lock names the runner");
      // The inbox exists once dev/run says ready, before anything is written to it: gcloud's cp checks it first.
      GcloudStorage gcloud = gcloudAsPrinted(table, logDir);
      assertEquals("gs://" + Topology.BUCKET + "/", gcloud.run("ls").orThrow().stdout().strip(), "the buckets");
      // The Gemini variables it prints reach its stand-in, as `once models` or a function run by hand would.
      Map<String, String> exported = assignments(table, "export ");
      exported.put("GEMINI_TIMEOUT_SECONDS", "30");
      String model = GeminiModels.builtIn().defaultModel();
      try (Client gemini = GeminiClients.create(Settings.of(exported))) {
        assertEquals("models/" + model, gemini.models.get(model, null).name().orElseThrow(), "the stand-in's model");
      }

      ByteArrayOutputStream secondErr = new ByteArrayOutputStream();
      int second = LocalPipeline.run(new String[] {"--log-dir", logDir.toString()}, ports.asEnvironment(),
          new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8),
          new PrintStream(secondErr, true, StandardCharsets.UTF_8), false);
      assertEquals(LocalPipeline.FAILED, second);
      assertTrue(secondErr.toString(StandardCharsets.UTF_8).contains("already running here (pid " + runner.pid() + ","),
          secondErr.toString(StandardCharsets.UTF_8));

      ByteArrayOutputStream demoOut = new ByteArrayOutputStream();
      ByteArrayOutputStream demoErr = new ByteArrayOutputStream();
      int demo = DemoCommand.run(new String[] {"--log-dir", logDir.toString()}, Map.of(),
          new PrintStream(demoOut, true, StandardCharsets.UTF_8),
          new PrintStream(demoErr, true, StandardCharsets.UTF_8));
      String demoText = demoOut.toString(StandardCharsets.UTF_8) + demoErr.toString(StandardCharsets.UTF_8);
      assertEquals(0, demo, demoText);
      assertTrue(demoText.contains("verdict: OK"), demoText);

      Await.until(Bounds.CALL, () -> read(output).contains("notify→duplicate"),
          "the combined log to show the redelivered message absorbed");
      String log = read(output);
      assertTrue(log.matches("(?s).*DocumentUploaded +analyse→processed, publish→processed +key [0-9a-f]{16} .*"), log);
      assertTrue(log.contains("answered 200"), log);
      assertFalse(log.contains("\tat "), "no stack traces in the combined log");
      assertTrue(read(logDir.resolve("combined.log")).contains("analyse→processed"), "the combined log is kept");
      gcloudUpload_isAnalysedOnce(gcloud, ports, logDir);

      List<Long> children = ProcessHandle.of(runner.pid()).orElseThrow().descendants().map(ProcessHandle::pid).toList();
      // The two emulators and the five functions; the stand-ins, the relay and the notification endpoint run in
      // the runner's own JVM (their log files are checked above through the table, their work through the demo).
      assertTrue(children.size() >= 2 + Part.functions().size(), "the emulators and the functions: " + children);

      runner.destroy(); // SIGTERM, as Ctrl-C's SIGINT: the runner's shutdown hook stops everything
      Await.until(Bounds.CALL, () -> !runner.isAlive(), "dev/run to exit");
      Await.until(Bounds.CALL, () -> children.stream().noneMatch(RunnerProcessTest::alive),
          "every child of dev/run to have exited");
      assertFalse(Files.exists(RunLock.file(logDir)), "the lock is removed");
      assertTrue(read(output).contains("stopped"), read(output));
    } finally {
      if (runner.isAlive()) {
        ProcessHandle.of(runner.pid()).ifPresent(h -> h.descendants().forEach(ProcessHandle::destroyForcibly));
        runner.destroyForcibly();
      }
    }
  }

  /** gcloud with the variables dev/run printed, word for word, and a configuration of its own (no account). */
  private static GcloudStorage gcloudAsPrinted(String table, Path logDir) {
    Map<String, String> env = assignments(table, "gcloud storage: export ");
    env.put("CLOUDSDK_CONFIG", logDir.resolve("gcloud-config").toString());
    return new GcloudStorage(env, Duration.ofMinutes(2));
  }

  /** The variables of the first line of dev/run's table that starts with {@code prefix} ({@code export A=1 B=2}). */
  private static Map<String, String> assignments(String table, String prefix) {
    String line = table.lines().map(String::strip).filter(l -> l.startsWith(prefix)).findFirst()
        .orElseThrow(() -> new AssertionError("no '" + prefix + "…' line in:\n" + table));
    Map<String, String> env = new LinkedHashMap<>();
    for (String assignment : line.substring(prefix.length()).split(" ")) {
      int eq = assignment.indexOf('=');
      env.put(assignment.substring(0, eq), assignment.substring(eq + 1));
    }
    return env;
  }

  /** A PDF copied in with gcloud (content type from its name, as a user's) gets one analysis, and it is analysed. */
  private static void gcloudUpload_isAnalysedOnce(GcloudStorage gcloud, Ports ports, Path logDir) throws Exception {
    Path pdf = Files.write(logDir.resolve("invoice.pdf"), InvoicePdf.of("GC-0001"));
    String name = "gcloud/invoice.pdf";
    String url = "gs://" + Topology.BUCKET + "/" + name;
    long generation = gcloud.run("cp", "--print-created-message", pdf.toString(), url).orThrow().createdGeneration(url);
    String key = "gcs:" + Topology.BUCKET + "/" + name + "#" + generation;
    try (Firestore db = FirestoreClients.forEmulator(RunConfig.PROJECT, ports.hostPort(Part.FIRESTORE))) {
      Await.until(Bounds.PATIENT,
          () -> analyses(db, key).stream().anyMatch(a -> FINAL.contains(a.getString("status"))),
          key + " to reach a final status");
      List<QueryDocumentSnapshot> analyses = analyses(db, key);
      assertEquals(1, analyses.size(), "one analysis for " + key);
      assertEquals("analysed", analyses.get(0).getString("status"), key);
    }
  }

  private static List<QueryDocumentSnapshot> analyses(Firestore db, String key) {
    try {
      return db.collection(RecordWrites.ANALYSES).whereEqualTo("key", key).get()
          .get(Bounds.CALL.toSeconds(), TimeUnit.SECONDS)
          .getDocuments();
    } catch (Exception e) {
      throw new IllegalStateException("reading the analyses of " + key, e);
    }
  }

  @Test
  void aBadOption_stopsTheProcessWithUsage() throws Exception {
    Path logDir = LOGS.resolve("bad-option-" + System.nanoTime());
    Files.createDirectories(logDir);
    Path output = logDir.resolve("runner.out");
    Process runner =
        runner(logDir, Ports.free().asEnvironment(), "--prot", "1").redirectOutput(output.toFile()).start();
    assertTrue(runner.waitFor(Bounds.CALL.toSeconds(), TimeUnit.SECONDS));
    assertEquals(LocalPipeline.USAGE, runner.exitValue(), read(output));
    assertTrue(read(output).contains("unknown option --prot"), read(output));
    assertTrue(read(output).contains("usage: dev/run"), read(output));
  }

  @Test
  void withoutTheCloudSdkEmulators_theRunnerSaysWhatToInstall_andStartsNothing() throws Exception {
    Path logDir = LOGS.resolve("no-sdk-" + System.nanoTime());
    Files.createDirectories(logDir);
    Path output = logDir.resolve("runner.out");
    ProcessBuilder builder = runner(logDir, Ports.free().asEnvironment()).redirectOutput(output.toFile());
    builder.environment().put("CLOUDSDK_ROOT", logDir.resolve("no-such-sdk").toString());
    Process runner = builder.start();
    Await.until(Bounds.CALL, () -> !runner.isAlive(), "dev/run to give up");
    assertEquals(LocalPipeline.FAILED, runner.exitValue(), read(output));
    assertTrue(read(output).contains("the Cloud SDK Firestore emulator is missing"), read(output));
    assertTrue(read(output).contains("install the Cloud SDK component cloud-firestore-emulator"), read(output));
    assertFalse(read(output).contains("starting the pipeline"), read(output));
    assertEquals(Optional.empty(), StackInfo.read(RunLock.file(logDir)), "no lock left");
  }
}
