package dev.once.bench;

import dev.once.local.eventarc.DirectSender;
import dev.once.local.http.RetryPolicy;
import dev.once.local.invoker.FunctionProcess;
import dev.once.local.process.Jvm;
import dev.once.local.samples.InvoicePdf;
import dev.once.wire.eventarc.CloudEvent;
import dev.once.wire.storage.ObjectFinalized;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.zip.ZipFile;

/**
 * dev/bench coldstart (issues 7 and 15): invoker process start to first event answered 2xx, for DocumentUploaded (a
 * realistic first delivery of a real document through the emulators and stand-ins, and separately a duplicate),
 * against the function a user would deploy without the guard (the same work with the same clients, unguarded) and
 * a hello-world function, on the same invoker; several rounds, the kinds interleaved, medians. Targets: a first
 * delivery at most 1.15× the unguarded function (the guard's own start-up cost) and 2.5× hello world. Then the
 * deploy jar's size, and a probe that times the steps of a first delivery in a fresh JVM, to show where the time
 * goes.
 */
public final class ColdStartBench {
  /**
   * The same flags for every function: the JVM of DocumentUploaded's instance, 2 GiB and 1 vCPU (on which the JVM
   * picks the serial collector and fewer compiler threads, as it does in the deployed container), with the flags
   * Terraform's {@code jvm_options} gives it by default.
   */
  private static final List<String> DEFAULT_JVM =
      List.of("-XX:MaxRAM=2g", "-XX:ActiveProcessorCount=1", "-XX:TieredStopAtLevel=1");
  private static final String HELLO = "dev.once.bench.hello.HelloWorld";
  private static final String UNGUARDED = "dev.once.bench.UnguardedDocumentUploaded";
  private static final Executor ON_A_THREAD = task -> Thread.ofPlatform().start(task);
  private static final int STEADY_WARM_UP = 300;
  private static final int STEADY_EVENTS = 400;

  private final BenchStack stack;
  /** JVM flags of every launch; {@code --jvm FLAG} adds one (what JAVA_TOOL_OPTIONS would add when deployed). */
  private final List<String> jvm;
  private int launches;

  private ColdStartBench(BenchStack stack, List<String> jvm) {
    this.stack = stack;
    this.jvm = jvm;
  }

  public static void main(String[] args) throws Exception {
    int rounds = 5;
    Path candidate = null;
    List<String> jvm = new ArrayList<>(DEFAULT_JVM);
    List<String> candidateJvm = new ArrayList<>();
    for (int i = 0; i < args.length; i += 2) {
      String value = i + 1 < args.length ? args[i + 1] : "";
      switch (args[i]) {
        case "--rounds" -> rounds = Integer.parseInt(value);
        case "--candidate" -> candidate = Path.of(value).toAbsolutePath();
        case "--jvm" -> jvm.add(value);
        case "--candidate-jvm" -> candidateJvm.add(value);
        default -> throw new IllegalArgumentException(
            "usage: dev/bench coldstart [--rounds R] [--candidate JAR] [--candidate-jvm FLAG]... [--jvm FLAG]...");
      }
    }
    try (BenchStack stack = BenchStack.start()) {
      new ColdStartBench(stack, jvm).run(rounds, candidate, candidateJvm);
    }
  }

  /** One kind of launch: which jars and function, whether its first event is a duplicate, and flags of its own. */
  private record Kind(String label, List<Path> classpath, String target, boolean duplicate, List<String> flags) {
    Kind(String label, Path jar, String target, boolean duplicate) {
      this(label, List.of(jar), target, duplicate, List.of());
    }

    boolean hello() {
      return target.equals(HELLO);
    }
  }

  private void run(int rounds, Path candidate, List<String> candidateJvm) throws Exception {
    System.out.printf("cold start: invoker start to first event answered 2xx, %d rounds, kinds interleaved, JVM %s,"
        + " %d cores shared with everything else on this machine%n", rounds, String.join(" ", jvm),
        Runtime.getRuntime().availableProcessors());
    List<Kind> kinds = new ArrayList<>(List.of(
        new Kind("hello world", Artifacts.helloJar(), HELLO, false),
        new Kind("unguarded, first delivery",
            List.of(Artifacts.unguardedJar(), Artifacts.benchmarksJar(), Artifacts.functionJar()), UNGUARDED, false,
            List.of()),
        new Kind("DocumentUploaded, first delivery", Artifacts.functionJar(), BenchStack.DOCUMENT_UPLOADED, false),
        new Kind("DocumentUploaded, duplicate", Artifacts.functionJar(), BenchStack.DOCUMENT_UPLOADED, true)));
    if (candidate != null || !candidateJvm.isEmpty()) {
      // A changed deploy jar (--candidate) or JVM flags (--candidate-jvm), measured in the same rounds: the way to
      // try a start-up change.
      List<Path> jar = List.of(candidate == null ? Artifacts.functionJar() : candidate);
      kinds.add(new Kind("candidate, first delivery", jar, BenchStack.DOCUMENT_UPLOADED, false, candidateJvm));
      kinds.add(new Kind("candidate, duplicate", jar, BenchStack.DOCUMENT_UPLOADED, true, candidateJvm));
    }
    jarSizes(candidate);
    List<ObjectFinalized> analysed = analyseBeforehand(rounds);
    Map<Kind, List<InvokerLaunch.Timing>> timings = new LinkedHashMap<>();
    Map<Kind, List<Double>> handlerMs = new LinkedHashMap<>();
    for (int round = 0; round < rounds; round++) {
      List<Kind> order = new ArrayList<>(kinds);
      Collections.rotate(order, round); // no kind always goes first, after the machine was idle
      for (Kind kind : order) {
        ObjectFinalized done = analysed.get(round);
        CloudEvent event = kind.duplicate()
            ? DirectSender.finalized(stack.storage().renotify(done.bucket(), done.name(), done.generation()))
            : DirectSender
                .finalized(stack.upload("coldstart/" + (++launches) + ".pdf", InvoicePdf.of("CS-" + launches)));
        List<String> flags = new ArrayList<>(jvm);
        flags.addAll(kind.flags());
        try (InvokerLaunch launch = InvokerLaunch.start(kind.classpath(), kind.target(), flags,
            kind.hello() ? Map.of() : stack.environment(), log())) {
          InvokerLaunch.Timing timing = launch.firstEvent(event);
          timings.computeIfAbsent(kind, k -> new ArrayList<>()).add(timing);
          Long handled = launch.loggedLatencyMs();
          if (handled != null) {
            handlerMs.computeIfAbsent(kind, k -> new ArrayList<>()).add(handled.doubleValue());
          }
          System.out.printf("  round %d  %-34s listening after %5.0f ms, first event answered after %5.0f ms%s%n",
              round + 1, kind.label(), timing.listenMs(), timing.answeredMs(),
              handled == null ? "" : " (the function's own latency: " + handled + " ms)");
        }
      }
    }
    double hello = answeredMs(timings, kinds.get(0));
    System.out.printf("%n%-34s %10s %10s %15s %16s%n", "median", "listening", "answered", "ratio to hello",
        "function's own");
    for (Kind kind : kinds) {
      double listen = median(timings.get(kind).stream().map(InvokerLaunch.Timing::listenMs).toList());
      double answered = answeredMs(timings, kind);
      System.out.printf("%-34s %7.0f ms %7.0f ms %14.2fx %13s%n", kind.label(), listen, answered, answered / hello,
          handlerMs.containsKey(kind) ? String.format("%.0f ms", median(handlerMs.get(kind))) : "-");
    }
    System.out.println();
    double unguarded = answeredMs(timings, kinds.get(1));
    double first = answeredMs(timings, kinds.get(2));
    System.out.printf("DocumentUploaded, first delivery / unguarded = %.2f (target <= 1.15: %s)%n", first / unguarded,
        first / unguarded <= 1.15 ? "met" : "MISSED");
    System.out.printf("DocumentUploaded, first delivery / hello world = %.2f (target <= 2.5: %s)%n", first / hello,
        first / hello <= 2.5 ? "met" : "MISSED");
    for (Kind kind : kinds.subList(3, kinds.size())) {
      System.out.printf("%s / hello world = %.2f, / unguarded = %.2f%n", kind.label(),
          answeredMs(timings, kind) / hello, answeredMs(timings, kind) / unguarded);
    }
    if (!candidateJvm.isEmpty()) {
      steadyState(candidateJvm);
    }
    probe();
  }

  /**
   * What start-up flags cost once started: an instance with the usual flags and one with {@code candidateJvm} side by
   * side, each given the same first deliveries after a warm-up, 4 at a time; the CPU seconds of each function process
   * per event (steadier than wall time on shared cores).
   */
  private void steadyState(List<String> candidateJvm) {
    List<String> flags = new ArrayList<>(jvm);
    flags.addAll(candidateJvm);
    try (FunctionProcess usual = stack.startDocumentUploaded(jvm, "coldstart-steady-usual.log");
        FunctionProcess candidate = stack.startDocumentUploaded(flags, "coldstart-steady-candidate.log")) {
      CpuMeter cpu = new CpuMeter().add("usual", List.of(usual.pid())).add("candidate", List.of(candidate.pid()));
      for (int[] phase : new int[][] {{STEADY_WARM_UP, 0}, {STEADY_EVENTS, 1}}) {
        Map<String, Double> before = cpu.read();
        CompletableFuture<Void> both = CompletableFuture.allOf(
            CompletableFuture.runAsync(() -> firstDeliveries(usual, "usual-" + phase[1], phase[0]), ON_A_THREAD),
            CompletableFuture.runAsync(() -> firstDeliveries(candidate, "candidate-" + phase[1], phase[0]),
                ON_A_THREAD));
        both.join(); // a sender's failure fails the benchmark
        if (phase[1] == 1) {
          Map<String, Double> spent = CpuMeter.since(before, cpu.read());
          double usualMs = spent.get("usual") * 1000 / phase[0];
          double candidateMs = spent.get("candidate") * 1000 / phase[0];
          System.out.printf("%nsteady state, after %d events each: %d first deliveries, 4 at a time, side by side:"
              + " usual flags %.1f ms of CPU per event, with %s %.1f ms (x%.2f)%n", STEADY_WARM_UP, phase[0], usualMs,
              String.join(" ", candidateJvm), candidateMs, candidateMs / usualMs);
        }
      }
    }
  }

  private void firstDeliveries(FunctionProcess instance, String batch, int count) {
    List<CloudEvent> events = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      events.add(DirectSender.finalized(
          stack.upload("coldstart/steady-" + batch + "-" + i + ".pdf", InvoicePdf.of("S-" + batch + "-" + i))));
    }
    try {
      DirectSender.Report report = new DirectSender(List.of(instance.url()), 4,
          RetryPolicy.defaults(), Duration.ofSeconds(60)).send(events);
      if (!report.gaveUp().isEmpty()) {
        throw new IllegalStateException(report.gaveUp().size() + " steady-state events were never acknowledged");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  private static double answeredMs(Map<Kind, List<InvokerLaunch.Timing>> timings, Kind kind) {
    return median(timings.get(kind).stream().map(InvokerLaunch.Timing::answeredMs).toList());
  }

  private Path log() {
    return stack.logDir.resolve("coldstart-" + (++launches) + ".log");
  }

  private static void jarSizes(Path candidate) throws IOException {
    System.out.printf("deploy jar: %s; hello-world jar: %,d bytes%s%n", size(Artifacts.functionJar()),
        Files.size(Artifacts.helloJar()), candidate == null ? "" : "; candidate jar: " + size(candidate));
  }

  private static String size(Path jar) throws IOException {
    try (ZipFile zip = new ZipFile(jar.toFile())) {
      return String.format("%.1f MiB (%,d bytes, %,d entries)", Files.size(jar) / 1048576.0, Files.size(jar),
          zip.size());
    }
  }

  /** The documents the duplicate launches redeliver: analysed once by an instance started for that alone. */
  private List<ObjectFinalized> analyseBeforehand(int rounds) throws InterruptedException {
    List<ObjectFinalized> documents = new ArrayList<>();
    List<CloudEvent> events = new ArrayList<>();
    for (int round = 0; round < rounds; round++) {
      ObjectFinalized document = stack.upload("coldstart/done-" + round + ".pdf", InvoicePdf.of("CD-" + round));
      documents.add(document);
      events.add(DirectSender.finalized(document));
    }
    try (FunctionProcess instance = stack.startDocumentUploaded(jvm, "coldstart-prepare.log")) {
      DirectSender.Report report = new DirectSender(List.of(instance.url()), 1,
          RetryPolicy.defaults(), Duration.ofSeconds(60)).send(events);
      if (!report.gaveUp().isEmpty()) {
        throw new IllegalStateException("could not analyse the documents to redeliver: " + report.gaveUp());
      }
    }
    return documents;
  }

  /** A fresh JVM, the deploy jar on its class path, timing each step of a first delivery on its own. */
  private void probe() throws Exception {
    ObjectFinalized a = stack.upload("coldstart/probe-a.pdf", InvoicePdf.of("P-A"));
    ObjectFinalized b = stack.upload("coldstart/probe-b.pdf", InvoicePdf.of("P-B"));
    String classPath = String.join(File.pathSeparator, Artifacts.functionJar().toString(),
        Artifacts.benchmarksJar().toString(), Artifacts.benchClasses().toString(), Artifacts.invokerJar().toString());
    List<String> command = new ArrayList<>(List.of(Jvm.java()));
    command.addAll(jvm);
    command.addAll(List.of("-cp", classPath, "dev.once.bench.ColdStartProbe",
        a.name(), Long.toString(a.generation()), Long.toString(InvoicePdf.of("P-A").length),
        b.name(), Long.toString(b.generation()), Long.toString(InvoicePdf.of("P-B").length)));
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
    builder.environment().putAll(stack.environment());
    Path out = stack.logDir.resolve("coldstart-probe.log");
    builder.redirectOutput(out.toFile());
    Process process = builder.start();
    if (!process.waitFor(3, TimeUnit.MINUTES) || process.exitValue() != 0) {
      process.destroyForcibly();
      throw new IllegalStateException("the cold-start probe failed; see " + out);
    }
    System.out.println();
    try {
      Files.readAllLines(out).stream().filter(line -> line.startsWith("probe")).map(line -> line.substring(6))
          .forEach(System.out::println);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static double median(List<Double> values) {
    return StormBench.median(values);
  }
}
