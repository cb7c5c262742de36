package dev.once.bench;

import dev.once.config.Settings;
import dev.once.entry.Report;
import dev.once.functions.Benchmarks;
import dev.once.key.StorageObjectKeys;
import dev.once.pipeline.DocumentSource;
import dev.once.pipeline.Effects;
import dev.once.pipeline.PipelineSetting;
import dev.once.pipeline.ResultMessage;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Where the first event of a new DocumentUploaded instance spends its time: run by {@code dev/bench coldstart} in
 * a fresh JVM with the deploy jar on its class path and the function's environment, it builds each client and
 * makes each first call on its own, timed, in the order a first delivery needs them; then handles two documents
 * whole. Lines start with "probe" so the benchmark can pick them out.
 *
 * <p>Arguments: name, generation and size of two PDFs already in the inbox bucket.
 */
public final class ColdStartProbe {
  private long last = System.nanoTime();

  public static void main(String[] args) throws Exception {
    long uptime = ManagementFactory.getRuntimeMXBean().getUptime();
    new ColdStartProbe().run(args, uptime);
  }

  private void run(String[] args, long uptimeAtMain) throws Exception {
    print("JVM start to main (this probe's own JVM)", uptimeAtMain);
    Class.forName("dev.once.functions.DocumentUploaded");
    Benchmarks clients = Benchmarks.of(Settings.fromEnvironment());
    step("load DocumentUploaded, read the settings");
    DocumentSource a = source(args[0], args[1], args[2]);
    DocumentSource b = source(args[3], args[4], args[5]);

    clients.firestore();
    step("build the Firestore client");
    clients.once().peek(Benchmarks.key(a), Effects.PUBLISH);
    step("first Firestore read (the duplicate check)");
    timed("build the Storage client", clients::storage);
    byte[] content = timed("first Storage read", () -> read(clients, a));
    timed("build the Gemini client", clients::analyzer);
    timed("first Gemini call", () -> clients.analyzer().analyse(content, "application/pdf"));
    timed("build the Pub/Sub publisher, first publish", () -> clients.publisher().publish(
        clients.topic(PipelineSetting.RESULTS_TOPIC), "{\"probe\":true}".getBytes(StandardCharsets.UTF_8),
        ResultMessage.attributes(StorageObjectKeys.of(a.bucket(), a.name() + "-probe", a.generation()))));
    Function<DocumentSource, Report> flow = clients.documentFlow();
    timed("then a whole first delivery (all clients built)", () -> flow.apply(a));
    timed("and the next first delivery", () -> flow.apply(b));
    timed("and a duplicate", () -> flow.apply(b));
  }

  private static DocumentSource source(String name, String generation, String size) {
    return new DocumentSource("inbox", name, Long.parseLong(generation), "application/pdf", Long.parseLong(size),
        null, null);
  }

  private static byte[] read(Benchmarks clients, DocumentSource document) {
    try {
      return clients.read(document, 1 << 24);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private <T> T timed(String what, Supplier<T> action) {
    T value = action.get();
    step(what);
    return value;
  }

  private void step(String what) {
    long now = System.nanoTime();
    print(what, (now - last) / 1_000_000);
    last = System.nanoTime();
  }

  private static void print(String what, long ms) {
    System.out.printf("probe   %-50s %6d ms%n", what, ms);
  }
}
