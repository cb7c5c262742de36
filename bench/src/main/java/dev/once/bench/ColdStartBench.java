package dev.once.bench;

import dev.once.local.emulator.FreePort;
import dev.once.local.eventarc.CloudEvent;
import dev.once.local.eventarc.DirectSender;
import dev.once.local.invoker.FunctionProcess;
import dev.once.local.storage.ObjectFinalized;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.zip.ZipFile;

/**
 * dev/bench coldstart (issue 7, "cost per event: cold start"): invoker process start to first event answered 2xx,
 * for DocumentUploaded (a realistic first delivery of a real document through the emulators and stand-ins, and
 * separately a duplicate) against a hello-world function on the same invoker; several rounds, the three kinds
 * interleaved, medians. Target: DocumentUploaded at most 2× hello world. Then the deploy jar's size, and a probe
 * that times the steps of a first delivery in a fresh JVM, to show where the time goes.
 */
public final class ColdStartBench {
  /** The same flags for both functions: as the platform sizes the JVM of DocumentUploaded's 2 GiB instance. */
  private static final List<String> JVM = List.of("-XX:MaxRAM=2g");
  private static final String HELLO = "dev.once.bench.hello.HelloWorld";

  private final BenchStack stack;
  private int launches;

  private ColdStartBench(BenchStack stack) {
    this.stack = stack;
  }

  public static void main(String[] args) throws Exception {
    int rounds = 5;
    if (args.length == 2 && args[0].equals("--rounds")) {
      rounds = Integer.parseInt(args[1]);
    } else if (args.length != 0) {
      throw new IllegalArgumentException("usage: dev/bench coldstart [--rounds R]");
    }
    try (BenchStack stack = BenchStack.start()) {
      new ColdStartBench(stack).run(rounds);
    }
  }

  private enum Kind { HELLO, FIRST, DUPLICATE }

  private void run(int rounds) throws Exception {
    System.out.printf("cold start: invoker start to first event answered 2xx, %d rounds, kinds interleaved, JVM %s,"
        + " %d cores shared with everything else on this machine%n", rounds, String.join(" ", JVM),
        Runtime.getRuntime().availableProcessors());
    jarSizes();
    List<ObjectFinalized> analysed = analyseBeforehand(rounds);
    Map<Kind, List<InvokerLaunch.Timing>> timings = new LinkedHashMap<>();
    Map<Kind, List<Long>> handlerMs = new LinkedHashMap<>();
    for (int round = 0; round < rounds; round++) {
      List<Kind> order = new ArrayList<>(List.of(Kind.values()));
      Collections.rotate(order, round); // no kind always goes first, after the machine was idle
      for (Kind kind : order) {
        CloudEvent event = switch (kind) {
          case HELLO, FIRST -> DirectSender.finalized(stack.upload("coldstart/first-" + round + "-" + kind + ".pdf",
              Invoices.pdf("CS-" + round)));
          case DUPLICATE -> DirectSender.finalized(stack.storage.renotify(analysed.get(round).bucket(),
              analysed.get(round).name(), analysed.get(round).generation()));
        };
        try (InvokerLaunch launch = kind == Kind.HELLO
            ? InvokerLaunch.start(Artifacts.helloJar(), HELLO, JVM, Map.of(), log())
            : InvokerLaunch.start(Artifacts.functionJar(), BenchStack.DOCUMENT_UPLOADED, JVM, stack.environment(), log())) {
          InvokerLaunch.Timing timing = launch.firstEvent(event);
          timings.computeIfAbsent(kind, k -> new ArrayList<>()).add(timing);
          Long handled = launch.loggedLatencyMs();
          if (handled != null) {
            handlerMs.computeIfAbsent(kind, k -> new ArrayList<>()).add(handled);
          }
          System.out.printf("  round %d  %-9s listening after %6.0f ms, first event answered after %6.0f ms%s%n",
              round + 1, kind, timing.listenMs(), timing.answeredMs(),
              handled == null ? "" : " (the function's own latency: " + handled + " ms)");
        }
      }
    }
    double hello = median(timings.get(Kind.HELLO).stream().map(InvokerLaunch.Timing::answeredMs).toList());
    System.out.printf("%n%-34s %10s %10s %16s%n", "median", "listening", "answered", "ratio to hello");
    for (Kind kind : Kind.values()) {
      double listen = median(timings.get(kind).stream().map(InvokerLaunch.Timing::listenMs).toList());
      double answered = median(timings.get(kind).stream().map(InvokerLaunch.Timing::answeredMs).toList());
      System.out.printf("%-34s %7.0f ms %7.0f ms %15.2fx%n", label(kind), listen, answered, answered / hello);
    }
    for (Kind kind : List.of(Kind.FIRST, Kind.DUPLICATE)) {
      double ratio = median(timings.get(kind).stream().map(InvokerLaunch.Timing::answeredMs).toList()) / hello;
      System.out.printf("%s / hello world = %.2f (target <= 2: %s)%n", label(kind), ratio, ratio <= 2 ? "met" : "MISSED");
    }
    if (handlerMs.containsKey(Kind.FIRST)) {
      System.out.printf("the function's own latency of its first event (median): first delivery %.0f ms, duplicate"
          + " %.0f ms%n", median(handlerMs.get(Kind.FIRST).stream().map(Long::doubleValue).toList()),
          median(handlerMs.getOrDefault(Kind.DUPLICATE, List.of(0L)).stream().map(Long::doubleValue).toList()));
    }
    probe();
  }

  private static String label(Kind kind) {
    return switch (kind) {
      case HELLO -> "hello world";
      case FIRST -> "DocumentUploaded, first delivery";
      case DUPLICATE -> "DocumentUploaded, duplicate";
    };
  }

  private Path log() {
    return stack.logDir.resolve("coldstart-" + (++launches) + ".log");
  }

  private static void jarSizes() throws IOException {
    Path deploy = Artifacts.functionJar();
    try (ZipFile jar = new ZipFile(deploy.toFile())) {
      System.out.printf("deploy jar %s: %.1f MiB (%,d bytes, %,d entries); hello-world jar: %,d bytes%n",
          deploy.getFileName(), Files.size(deploy) / 1048576.0, Files.size(deploy), jar.size(),
          Files.size(Artifacts.helloJar()));
    }
  }

  /** The documents the duplicate launches redeliver: analysed once by an instance started for that alone. */
  private List<ObjectFinalized> analyseBeforehand(int rounds) throws InterruptedException {
    List<ObjectFinalized> documents = new ArrayList<>();
    List<CloudEvent> events = new ArrayList<>();
    for (int round = 0; round < rounds; round++) {
      ObjectFinalized document = stack.upload("coldstart/done-" + round + ".pdf", Invoices.pdf("CD-" + round));
      documents.add(document);
      events.add(DirectSender.finalized(document));
    }
    try (FunctionProcess instance = stack.startDocumentUploaded(FreePort.pick(), JVM, "coldstart-prepare.log")) {
      DirectSender.Report report = new DirectSender(List.of(instance.url()), 1,
          dev.once.local.eventarc.RetryPolicy.defaults(), java.time.Duration.ofSeconds(60)).send(events);
      if (!report.gaveUp().isEmpty()) {
        throw new IllegalStateException("could not analyse the documents to redeliver: " + report.gaveUp());
      }
    }
    return documents;
  }

  /** A fresh JVM, the deploy jar on its class path, timing each step of a first delivery on its own. */
  private void probe() throws Exception {
    ObjectFinalized a = stack.upload("coldstart/probe-a.pdf", Invoices.pdf("P-A"));
    ObjectFinalized b = stack.upload("coldstart/probe-b.pdf", Invoices.pdf("P-B"));
    String classPath = String.join(java.io.File.pathSeparator, Artifacts.functionJar().toString(),
        Artifacts.benchClasses().toString(), Artifacts.invokerJar().toString());
    List<String> command = new ArrayList<>(List.of(
        Path.of(System.getProperty("java.home"), "bin", "java").toString()));
    command.addAll(JVM);
    command.addAll(List.of("-cp", classPath, "dev.once.functions.ColdStartProbe",
        a.name(), Long.toString(a.generation()), Long.toString(Invoices.pdf("P-A").length),
        b.name(), Long.toString(b.generation()), Long.toString(Invoices.pdf("P-B").length)));
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
    builder.environment().putAll(stack.environment());
    Path out = stack.logDir.resolve("coldstart-probe.log");
    builder.redirectOutput(out.toFile());
    Process process = builder.start();
    if (!process.waitFor(3, java.util.concurrent.TimeUnit.MINUTES) || process.exitValue() != 0) {
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
