package dev.once.functions;

import dev.once.config.Settings;
import dev.once.key.StorageObjectKeys;
import dev.once.pipeline.DocumentSource;
import dev.once.pipeline.Effects;
import dev.once.pipeline.PipelineSetting;
import dev.once.pipeline.ResultMessage;
import java.lang.management.ManagementFactory;
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
    Clients clients = new Clients(Settings.fromEnvironment());
    step("load DocumentUploaded, read the settings");
    DocumentSource a = source(args[0], args[1], args[2]);
    DocumentSource b = source(args[3], args[4], args[5]);

    clients.firestore.get();
    step("build the Firestore client");
    clients.once.peek(DocumentFlow.key(a), Effects.PUBLISH);
    step("first Firestore read (the duplicate check)");
    timed("build the Storage client", clients.storage::get);
    byte[] content = timed("first Storage read", () -> read(clients, a));
    timed("build the Gemini client", clients.analyzer::get);
    timed("first Gemini call", () -> clients.analyzer.get().analyse(content, "application/pdf"));
    timed("build the Pub/Sub publisher, first publish", () -> clients.publisher.get().publish(
        clients.topic(PipelineSetting.RESULTS_TOPIC), "{\"probe\":true}".getBytes(java.nio.charset.StandardCharsets.UTF_8),
        ResultMessage.attributes(StorageObjectKeys.of(a.bucket(), a.name() + "-probe", a.generation()))));
    DocumentFlow flow = Wiring.documentFlow(clients);
    timed("then a whole first delivery (all clients built)", () -> flow.handle(a, DocumentFlow.key(a)));
    timed("and the next first delivery", () -> flow.handle(b, DocumentFlow.key(b)));
    timed("and a duplicate", () -> flow.handle(b, DocumentFlow.key(b)));
  }

  private static DocumentSource source(String name, String generation, String size) {
    return new DocumentSource("inbox", name, Long.parseLong(generation), "application/pdf", Long.parseLong(size),
        null, null);
  }

  private static byte[] read(Clients clients, DocumentSource document) {
    try {
      return new DocumentReader(clients.storage.get()).read(document, 1 << 24);
    } catch (DocumentReader.Gone | DocumentReader.TooLarge e) {
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
