package dev.once.bench;

import com.google.cloud.firestore.QueryDocumentSnapshot;
import dev.once.config.Settings;
import dev.once.entry.Report;
import dev.once.functions.Benchmarks;
import dev.once.gemini.GeminiCompletionKeys;
import dev.once.local.gemini.BatchState;
import dev.once.local.invoker.FunctionProcess;
import dev.once.local.process.Jvm;
import dev.once.local.samples.InvoicePdf;
import dev.once.local.stack.Part;
import dev.once.pipeline.DocumentSource;
import dev.once.pipeline.RecordQueries;
import dev.once.wire.gemini.WebhookSigner;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;

/**
 * dev/bench batch, the webhook's part (issue 23): its answer time for one finished job of N documents
 * ({@code -Donce.bench.jobDocuments=N}; by default the most one job may hold, up to 1,000). The real GeminiWebhook
 * under the invoker, signed static deliveries POSTed one at a time: while the job is not completed yet (each is
 * handed off to BatchCompleted, answered {@code queued}) and once it is ({@code duplicate}, one read). Between the
 * two, the completion itself is timed in this process: what the answer waited for before it was handed off.
 */
final class WebhookAckBench {
  static final int JOB_DOCUMENTS =
      Integer.getInteger("once.bench.jobDocuments", Math.min(1000, RecordQueries.MAX_DOCUMENTS_PER_JOB));
  private static final int WARM_UP = 20;
  private static final int DELIVERIES = 200;
  private static final Duration TARGET_P99 = Duration.ofSeconds(2);
  private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  void run(BenchStack stack) throws Exception {
    Map<String, String> env = new HashMap<>(stack.environment());
    env.put("ANALYSIS_MODE", "batch");
    env.put("BATCH_MAX_DOCUMENTS", String.valueOf(JOB_DOCUMENTS)); // the last document fills the job: submitted
    Benchmarks clients = Benchmarks.of(Settings.of(env));
    Function<DocumentSource, Report> flow = clients.documentFlow();
    for (int i = 0; i < JOB_DOCUMENTS; i++) {
      DocumentSource document = CostBench.source(stack.upload("webhook-bench/invoice-" + i + ".pdf",
          InvoicePdf.of("W-" + i)));
      flow.apply(document);
    }
    String job = onlyJob(stack);
    stack.gemini().finish(job, BatchState.SUCCEEDED);

    try (FunctionProcess webhook = stack.startInstance(Part.GEMINI_WEBHOOK, Jvm.quick("-Xmx512m"),
        "GeminiWebhook-bench.log")) {
      WebhookSigner signer = WebhookSigner.fromSecret(stack.webhookSecret());
      Deliveries queued = deliver(webhook, signer, job, "queued");
      long t0 = System.nanoTime();
      clients.completionFlow().apply(GeminiCompletionKeys.ofName(job));
      long completionMs = (System.nanoTime() - t0) / 1_000_000;
      Deliveries duplicate = deliver(webhook, signer, job, "duplicate");

      System.out.printf("%nthe webhook's answer, one finished job of %d documents (GeminiWebhook under the invoker,"
          + " %d signed deliveries one at a time after %d to warm up)%n%n", JOB_DOCUMENTS, DELIVERIES, WARM_UP);
      System.out.printf("%-52s %s%n", "not completed yet: handed off, answered queued", queued);
      System.out.printf("%-52s %s (the instance caches final answers)%n", "completed before: answered duplicate",
          duplicate);
      System.out.printf("%-52s %d ms (BatchCompleted's; the answer no longer waits for it)%n",
          "the job's completion, in this process", completionMs);
      System.out.printf("%-52s p99 <= %d ms: %s%n", "target", TARGET_P99.toMillis(),
          queued.p99() <= TARGET_P99.toMillis() && duplicate.p99() <= TARGET_P99.toMillis() ? "met" : "NOT met");
    }
    clients.close();
  }

  /** Answer times of {@link #DELIVERIES} deliveries (after {@link #WARM_UP}), each answered 200 {@code status}. */
  private static Deliveries deliver(FunctionProcess webhook, WebhookSigner signer, String job, String status)
      throws Exception {
    String body = "{\"type\":\"batch.succeeded\",\"version\":\"v1\",\"data\":{\"id\":\"" + job + "\"}}";
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    List<Long> micros = new ArrayList<>();
    for (int i = 0; i < WARM_UP + DELIVERIES; i++) {
      String id = "msg_" + status + "_" + i;
      long now = Instant.now().getEpochSecond();
      HttpRequest request = HttpRequest.newBuilder(webhook.url()).timeout(Duration.ofSeconds(60))
          .header("webhook-id", id).header("webhook-timestamp", String.valueOf(now))
          .header("webhook-signature", signer.sign(id, now, bytes)).header("content-type", "application/json")
          .POST(HttpRequest.BodyPublishers.ofByteArray(bytes)).build();
      long t0 = System.nanoTime();
      HttpResponse<String> answer = HTTP.send(request, HttpResponse.BodyHandlers.ofString());
      long took = (System.nanoTime() - t0) / 1_000;
      if (answer.statusCode() != 200 || !answer.body().contains("\"status\":\"" + status + "\"")) {
        throw new IllegalStateException("the webhook answered " + answer.statusCode() + " " + answer.body()
            + ", not 200 " + status);
      }
      if (i >= WARM_UP) {
        micros.add(took);
      }
    }
    micros.sort(null);
    return new Deliveries(micros);
  }

  private record Deliveries(List<Long> sortedMicros) {
    long p99() {
      return micros(0.99) / 1000;
    }

    private long micros(double quantile) {
      int rank = Math.max(0, (int) Math.ceil(sortedMicros.size() * quantile) - 1);
      return sortedMicros.get(Math.min(sortedMicros.size() - 1, rank));
    }

    @Override
    public String toString() {
      return String.format("p50 %.1f ms, p99 %.1f ms, max %.1f ms", micros(0.5) / 1000.0, micros(0.99) / 1000.0,
          micros(1.0) / 1000.0);
    }
  }

  /** The one job the bench's documents were submitted in. */
  private static String onlyJob(BenchStack stack) throws Exception {
    Set<String> jobs = new TreeSet<>();
    int submitted = 0;
    for (QueryDocumentSnapshot analysis : stack.db.collection("analyses").whereEqualTo("status", "submitted").get()
        .get().getDocuments()) {
      if (analysis.getString("key") != null && analysis.getString("key").contains("/webhook-bench/")) {
        jobs.add(analysis.getString("job"));
        submitted++;
      }
    }
    if (jobs.size() != 1 || submitted != JOB_DOCUMENTS) {
      throw new IllegalStateException(submitted + " of " + JOB_DOCUMENTS + " documents submitted, in jobs " + jobs);
    }
    return jobs.iterator().next();
  }
}
