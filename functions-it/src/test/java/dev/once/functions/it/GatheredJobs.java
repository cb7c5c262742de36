package dev.once.functions.it;

import static dev.once.functions.it.PipelineStack.attributed;
import static dev.once.functions.it.PipelineStack.key;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.cloud.firestore.QueryDocumentSnapshot;
import dev.once.local.Await;
import dev.once.local.Bounds;
import dev.once.local.gemini.BatchState;
import dev.once.local.samples.InvoicePdf;
import dev.once.pipeline.RecordWrites;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.IntStream;

/**
 * A batch stack gathering documents into jobs of several, as the batch ITs drive it: a folder's documents uploaded,
 * the reconciler run every few seconds (as Cloud Scheduler would) until each names its job, a job finished and each
 * of its documents counted exactly.
 */
final class GatheredJobs {
  static final Duration DEADLINE = Bounds.PATIENT;
  private static final Duration RECONCILE_AFTER = Duration.ofSeconds(3);

  final PipelineStack stack;

  GatheredJobs(PipelineStack stack) {
    this.stack = stack;
  }

  /** Uploads {@code <folder>/doc-NN.pdf}, {@code count} of them; returns their keys. */
  List<String> upload(String folder, int count) {
    return IntStream.range(0, count).mapToObj(i -> key(stack.upload(String.format("%s/doc-%02d.pdf", folder, i),
        InvoicePdf.of(folder + i), "application/pdf"))).toList();
  }

  /** The documents' analyses recorded so far, by key (at most 30 keys: one query). */
  Map<String, QueryDocumentSnapshot> analyses(List<String> keys) {
    try {
      Map<String, QueryDocumentSnapshot> byKey = new HashMap<>();
      for (QueryDocumentSnapshot analysis : stack.db.collection(RecordWrites.ANALYSES).whereIn("key", List.copyOf(keys))
          .get().get(Bounds.CALL.toSeconds(), TimeUnit.SECONDS).getDocuments()) {
        byKey.put(analysis.getString("key"), analysis);
      }
      return byKey;
    } catch (Exception e) {
      throw new IllegalStateException("could not read the analyses of " + keys, e);
    }
  }

  Optional<QueryDocumentSnapshot> analysis(String key) {
    return Optional.ofNullable(analyses(List.of(key)).get(key));
  }

  /** Waits for {@code done}, running the reconciler every few seconds meanwhile. */
  void awaitReconciling(BooleanSupplier done, String what) {
    stack.awaitReconciling(DEADLINE, RECONCILE_AFTER, done, what);
  }

  /** The jobs the documents' analyses name, once every one names one. */
  Set<String> jobsOf(List<String> keys) {
    Map<String, String> jobs = new HashMap<>();
    awaitReconciling(() -> {
      analyses(keys).forEach((key, analysis) -> Optional.ofNullable(analysis.getString("job"))
          .ifPresent(job -> jobs.put(key, job)));
      return jobs.size() == keys.size();
    }, "a job named on every document of " + keys);
    return Set.copyOf(jobs.values());
  }

  /**
   * Finishes the job and waits until every document is notified and the relay idle; then, per document: analysed,
   * billed and published once, naming the job, and notified once.
   */
  void assertCompletedOnce(String job, List<String> keys) {
    stack.gemini.finish(job, BatchState.SUCCEEDED);
    awaitReconciling(() -> keys.stream().allMatch(key -> !stack.notifiedWith(key).isEmpty()),
        "every document of " + job + " notified");
    Await.until(DEADLINE, stack::relayIdle, "the relay idle");
    stack.assertAnalysedBilledAndPublishedOnce(keys);
    Map<String, QueryDocumentSnapshot> analyses = analyses(keys);
    for (String key : keys) {
      assertEquals(job, analyses.get(key).getString("job"), key);
      assertEquals(1, attributed(stack.published(), key).size(), "published " + key + " once");
      assertEquals(1, stack.notifiedWith(key).size(), "notified " + key + " once");
    }
  }
}
