package dev.once.bench;

import com.google.cloud.firestore.Firestore;
import dev.once.config.Settings;
import dev.once.entry.MalformedEvent;
import dev.once.entry.Report;
import dev.once.functions.Benchmarks;
import dev.once.key.PubSubMessageKeys;
import dev.once.local.eventarc.DirectSender;
import dev.once.local.samples.InvoicePdf;
import dev.once.observe.Log;
import dev.once.pipeline.DocumentSource;
import dev.once.pipeline.Effects;
import dev.once.wire.storage.ObjectFinalized;
import io.cloudevents.CloudEvent;
import io.cloudevents.core.builder.CloudEventBuilder;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * dev/bench cost (issues 7 and 15, "cost per event"): the Firestore calls one event costs, counted on the gRPC channel
 * of the client the real flows use ({@link FirestoreCalls}), in this process against the emulator and the stand-ins.
 * The flows are wired exactly as the entry points wire them ({@link Benchmarks}), with the counting client handed in
 * through its Firestore seam. A duplicate is measured twice: on the instance that settled the event (its
 * cache of final answers: no read) and on another instance (one read). Counts are exact and machine-independent; they
 * hold for Firestore itself, whose API the emulator serves.
 */
public final class CostBench {
  private static final int WARM_UP = 5;
  private static final int EVENTS = 20;
  private static final int NEW_INSTANCES = 5;

  private final BenchStack stack;
  private final FirestoreCalls calls;
  private final Supplier<Firestore> db;
  private final Map<String, String> env;
  private final List<Benchmarks> wired = new ArrayList<>();
  private int documents;
  private boolean allMet = true;

  private CostBench(BenchStack stack) {
    this.stack = stack;
    this.calls = new FirestoreCalls();
    Firestore counted =
        FirestoreCalls.client(BenchStack.PROJECT, stack.firestore().hostPort(), calls);
    this.db = () -> counted;
    this.env = stack.environment();
  }

  public static void main(String[] args) throws Exception {
    try (BenchStack stack = BenchStack.start()) {
      CostBench bench = new CostBench(stack);
      try {
        bench.run();
      } finally {
        bench.closeClients();
      }
    }
  }

  private void run() {
    System.out.printf("Firestore calls per event, counted on the functions' own client channel (%d events each, after"
        + " %d warm-up events; emulator, but the counts are Firestore's API calls)%n%n", EVENTS, WARM_UP);
    System.out.printf("%-46s %5s %7s  %-11s %s%n", "event", "reads", "commits", "other calls", "target");

    Function<DocumentSource, Report> sync = clients("sync").documentFlow();
    List<DocumentSource> done = new ArrayList<>();
    report("DocumentUploaded sync: first delivery", 1, 3,
        "1 read + 3 commits (the content claimed with the analysis; the analysis's completion claims the publish)",
        measure(() -> {
          DocumentSource document = upload();
          done.add(document);
          return () -> expect(sync.apply(document), "processed", "processed");
        }, EVENTS));
    int[] next = {0};
    report("DocumentUploaded sync: duplicate, warm", 0, 0, "no read (settled here)",
        measure(() -> {
          DocumentSource document = done.get(next[0]++ % done.size());
          return () -> expect(sync.apply(document), "duplicate", "duplicate");
        }, EVENTS));
    Function<DocumentSource, Report> other = clients("sync").documentFlow();
    int[] elsewhere = {0};
    report("DocumentUploaded sync: duplicate, other instance", 1, 0, "1 read",
        measureEach(() -> {
          DocumentSource document = done.get(elsewhere[0]++ % done.size());
          return () -> expect(other.apply(document), "duplicate", "duplicate");
        }, EVENTS));
    report("DocumentUploaded sync: a new instance's first", 1, 3, "as a first delivery",
        measureEach(() -> {
          DocumentSource document = upload();
          Function<DocumentSource, Report> fresh = clients("sync").documentFlow();
          return () -> expect(fresh.apply(document), "processed", "processed");
        }, NEW_INSTANCES));

    Function<DocumentSource, Report> batch = clients("batch").documentFlow();
    List<DocumentSource> submitted = new ArrayList<>();
    report("DocumentUploaded batch: first delivery", 2, 2,
        "1 read + 2 commits (the content claimed with the analysis; queued, no publish) + a count (is a job due?)",
        measure(() -> {
          DocumentSource document = upload();
          submitted.add(document);
          return () -> expect(batch.apply(document), "processed", null);
        }, EVENTS));
    int[] again = {0};
    report("DocumentUploaded batch: duplicate, warm", 0, 0, "no read (settled here)",
        measure(() -> {
          DocumentSource document = submitted.get(again[0]++ % submitted.size());
          return () -> expect(batch.apply(document), "duplicate", null);
        }, EVENTS));

    Benchmarks.Delivery delivery = clients("sync").deliveryFlow();
    List<Message> delivered = new ArrayList<>();
    report("MessageDelivered: first delivery", 0, 2, "2 commits, no read (the claim is the check)",
        measure(() -> {
          Message message = message();
          delivered.add(message);
          return () -> expect(delivery.deliver(message.id(), message.data(), message.attributes()), "processed", null);
        }, EVENTS));
    int[] redelivered = {0};
    report("MessageDelivered: duplicate, warm", 0, 0, "no read (settled here)",
        measure(() -> {
          Message message = delivered.get(redelivered[0]++ % delivered.size());
          return () -> expect(delivery.deliver(message.id(), message.data(), message.attributes()), "duplicate", null);
        }, EVENTS));
    System.out.printf("%nall targets %s%n", allMet ? "met" : "NOT met (see above)");
    GeminiInvoiceCost.print(env);
  }

  private Benchmarks clients(String mode) {
    Map<String, String> settings = new HashMap<>(env);
    settings.put("ANALYSIS_MODE", mode);
    Benchmarks clients = Benchmarks.of(Settings.of(settings), db, Log.stdout());
    wired.add(clients);
    return clients;
  }

  /** Each set of clients holds a Pub/Sub channel once it published: shut them down, as an instance would. */
  private void closeClients() {
    wired.forEach(Benchmarks::close);
  }

  /** A new document in the bucket, and the event naming it, read as DocumentUploaded reads its events. */
  private DocumentSource upload() {
    int n = ++documents;
    return source(stack.upload("cost/invoice-" + n + ".pdf", InvoicePdf.of("C-" + n)));
  }

  /** What DocumentUploaded reads of the stand-in's finalize event for {@code notification}. */
  static DocumentSource source(ObjectFinalized notification) {
    dev.once.wire.eventarc.CloudEvent sent = DirectSender.finalized(notification);
    CloudEvent event = CloudEventBuilder.v1()
        .withId(sent.id())
        .withSource(URI.create(sent.source()))
        .withType(sent.type())
        .withSubject(sent.subject())
        .withTime(sent.time().atOffset(ZoneOffset.UTC))
        .withData(sent.dataContentType(), sent.data())
        .build();
    try {
      return Benchmarks.document(event);
    } catch (MalformedEvent e) {
      throw new IllegalStateException("the stand-in's event does not parse: " + e.getMessage(), e);
    }
  }

  private int messages;

  private Message message() {
    int n = ++messages;
    String key = "bench:result-" + n;
    byte[] data = ("{\"key\":\"" + key + "\",\"status\":\"analysed\"}").getBytes(StandardCharsets.UTF_8);
    return new Message("m-" + n, data, Map.of(PubSubMessageKeys.ATTRIBUTE, key));
  }

  /** A result message as MessageDelivered reads it. */
  private record Message(String id, byte[] data, Map<String, String> attributes) {}

  /** One event's calls. */
  private record Cost(long reads, long commits, Map<String, Long> others, List<String> commitShapes) {}

  /** Warms up with the same kind of event, then counts each of {@code n} events on its own. */
  private List<Cost> measure(Supplier<Runnable> prepare, int n) {
    for (int i = 0; i < WARM_UP; i++) {
      prepare.get().run();
    }
    return measureEach(prepare, n);
  }

  private List<Cost> measureEach(Supplier<Runnable> prepare, int n) {
    List<Cost> costs = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      Runnable event = prepare.get(); // uploads and wiring happen outside the count
      FirestoreCalls.Snapshot before = calls.snapshot();
      event.run();
      FirestoreCalls.Snapshot spent = calls.snapshot().since(before);
      costs.add(new Cost(spent.reads(), spent.commitCount(), spent.others(), spent.commits()));
    }
    return costs;
  }

  private void report(String event, long targetReads, long targetCommits, String target, List<Cost> costs) {
    Set<Cost> distinct = new LinkedHashSet<>(costs);
    Cost first = costs.get(0);
    boolean met = distinct.size() == 1 && first.reads() == targetReads && first.commits() == targetCommits
        && first.others().isEmpty();
    allMet &= met;
    System.out.printf("%-46s %5d %7d  %-11s %s: %s%s%n", event, first.reads(), first.commits(),
        first.others().isEmpty() ? "none" : first.others(), target, met ? "met" : "MISSED",
        distinct.size() == 1 ? "" : " (events differ: " + distinct + ")");
    for (String commit : first.commitShapes()) {
      System.out.printf("%-46s   commit: %s%n", "", commit);
    }
  }

  /** Every measured event must be the kind it claims to be, or its count means nothing. */
  private static void expect(Report report, String outcome, String publish) {
    if (!outcome.equals(report.outcome().label())
        || (publish != null && !publish.equals(report.effects().get(Effects.PUBLISH)))) {
      throw new IllegalStateException("expected " + outcome + " (publish " + publish + "), got " + report);
    }
  }
}
