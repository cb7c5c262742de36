package dev.once.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.cloud.firestore.Firestore;
import dev.once.config.Settings;
import dev.once.entry.Report;
import dev.once.functions.Benchmarks;
import dev.once.key.PubSubMessageKeys;
import dev.once.local.samples.InvoicePdf;
import dev.once.observe.Log;
import dev.once.pipeline.DocumentSource;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The Firestore calls of a first delivery, exactly, counted as {@code dev/bench cost} counts them (on the functions'
 * own client channel, {@link FirestoreCalls}): a change that adds a read or a commit fails here, not only in the
 * bench. Each count is of the second event of its kind on the instance: the first one's pre-check read also sets the
 * instance's clock, which the bench counts apart ("a new instance's first").
 */
class CallCountsTest {
  private static BenchStack stack;
  private static FirestoreCalls calls;
  private static Firestore counted;
  private static final List<Benchmarks> wired = new ArrayList<>();
  private static int documents;

  @BeforeAll
  static void start() {
    stack = BenchStack.inProcess();
    calls = new FirestoreCalls();
    counted = FirestoreCalls.client(BenchStack.PROJECT, stack.firestore().hostPort(), calls);
  }

  @AfterAll
  static void stop() throws Exception {
    wired.forEach(Benchmarks::close);
    counted.close();
    stack.close();
  }

  @Test
  void aSyncFirstDelivery_isOneReadAndThreeCommits_theContentClaimedWithTheAnalysis() {
    Function<DocumentSource, Report> sync = flow("sync");
    assertEquals("processed", sync.apply(upload()).outcome().label());

    FirestoreCalls.Snapshot spent = count(sync, upload(), "processed");

    assertEquals(1, spent.reads(), "the pre-check of publish: " + spent);
    assertEquals(List.of("create idempotency[analyse] + create idempotency[content]",
        "update-if-unchanged idempotency[analyse] + create idempotency[publish] + merge analyses + set billing",
        "update-if-unchanged idempotency[publish]"), spent.commits());
    assertEquals(new FirestoreCalls.Billed(1, 7, 0, 3), spent.documents(), "as Firestore bills them: " + spent);
    assertEquals(Map.of(), spent.others(), "no transaction: " + spent);
  }

  @Test
  void aBatchFirstDelivery_isTwoReadsAndTwoCommits_theDueCheckACount() {
    Function<DocumentSource, Report> batch = flow("batch");
    assertEquals("processed", batch.apply(upload()).outcome().label());

    FirestoreCalls.Snapshot spent = count(batch, upload(), "processed");

    assertEquals(2, spent.reads(), "the pre-check of analyse, and the due check's count: " + spent);
    assertEquals(List.of("create idempotency[analyse] + create idempotency[content]",
        "update-if-unchanged idempotency[analyse] + set analyses"), spent.commits());
    assertEquals(new FirestoreCalls.Billed(2, 4, 0, 2), spent.documents(), "as Firestore bills them: " + spent);
    assertEquals(Map.of(), spent.others(), "no transaction: " + spent);
  }

  /**
   * With a daily budget (Terraform's default), far from the day's edge: the guard's reservation adds one commit (its
   * increment and marker) and one sum of the day's counters, billed one read, not the 16 documents it adds up.
   */
  @Test
  void aSyncFirstDeliveryWithADailyBudget_addsOneCommitAndOneBilledRead() {
    Function<DocumentSource, Report> guarded = flow("sync", Map.of("GEMINI_DAILY_BUDGET_USD", "1000"));
    assertEquals("processed", guarded.apply(upload()).outcome().label());

    FirestoreCalls.Snapshot spent = count(guarded, upload(), "processed");

    assertEquals(2, spent.reads(), "the pre-check of publish, and the day's sum after the reservation: " + spent);
    assertEquals(List.of("create idempotency[analyse] + create idempotency[content]",
        "merge budget + create budget",
        "update-if-unchanged idempotency[analyse] + create idempotency[publish] + merge analyses + set billing"
            + " + merge budget",
        "update-if-unchanged idempotency[publish]"), spent.commits());
    assertEquals(2, spent.documents().reads(), "the sum billed one read: " + spent);
  }

  @Test
  void aMessagesFirstDelivery_isTwoCommits_andNoRead() {
    Benchmarks.Delivery delivery = wired("sync").deliveryFlow();
    int[] n = {0};
    Supplier<Report> next = () -> {
      String key = "counts:result-" + (++n[0]);
      return delivery.deliver("m-" + n[0], ("{\"key\":\"" + key + "\",\"status\":\"analysed\"}")
          .getBytes(StandardCharsets.UTF_8), Map.of(PubSubMessageKeys.ATTRIBUTE, key));
    };
    assertEquals("processed", next.get().outcome().label());

    FirestoreCalls.Snapshot before = calls.snapshot();
    Report report = next.get();
    FirestoreCalls.Snapshot spent = calls.snapshot().since(before);

    assertEquals("processed", report.outcome().label(), "a first delivery: " + report);
    assertEquals(0, spent.reads(), "the claim's create is the duplicate check: " + spent);
    assertEquals(List.of("create idempotency[notify]", "update-if-unchanged idempotency[notify]"), spent.commits());
  }

  /**
   * Issue 40: a queued document is read twice from its upload to its job's submission — by the opener's read of the
   * queue and by the submission's read of its members — and each upload's due check is one read (the first upload on
   * an instance also reads the oldest queued document). The rest is the gathering's own: the oldest document, the
   * count of jobs in flight, its record read back and the cap's count at its opening, its record read to seal it, and
   * the queue looked at once more after the job was made (empty: a query is billed one read at least).
   */
  @Test
  void aJobsWorthOfUploads_readsEachQueuedDocumentTwice_toItsSubmission() {
    stack.firestore().clear(BenchStack.PROJECT);
    int n = 10;
    Function<DocumentSource, Report> batch = flow("batch", Map.of("BATCH_MAX_DOCUMENTS", String.valueOf(n)));
    List<DocumentSource> uploads = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      uploads.add(upload());
    }
    int jobsBefore = stack.gemini().batchNames().size();

    FirestoreCalls.Snapshot before = calls.snapshot();
    for (DocumentSource document : uploads) {
      assertEquals("processed", batch.apply(document).outcome().label());
    }
    FirestoreCalls.Snapshot spent = calls.snapshot().since(before);

    assertEquals(jobsBefore + 1, stack.gemini().batchNames().size(), "the last upload made the job of " + n);
    long uploadsOwn = 1 + 2L * n; // each one's pre-check and count, and the first one's read of the oldest
    long gatheringsOwn = 6;
    assertEquals(uploadsOwn + 2L * n + gatheringsOwn, spent.documents().reads(), "documents read: " + spent);
  }

  private static FirestoreCalls.Snapshot count(Function<DocumentSource, Report> flow, DocumentSource document,
      String outcome) {
    FirestoreCalls.Snapshot before = calls.snapshot();
    Report report = flow.apply(document);
    FirestoreCalls.Snapshot spent = calls.snapshot().since(before);
    assertEquals(outcome, report.outcome().label(), "the event counted is a first delivery: " + report);
    return spent;
  }

  /** The document flow wired as DocumentUploaded wires it, in {@code mode}, on the counting client. */
  private static Function<DocumentSource, Report> flow(String mode) {
    return flow(mode, Map.of());
  }

  private static Function<DocumentSource, Report> flow(String mode, Map<String, String> more) {
    return wired(mode, more).documentFlow();
  }

  private static Benchmarks wired(String mode) {
    return wired(mode, Map.of());
  }

  /** The functions' clients as the entry points wire them, in {@code mode}, on the counting client. */
  private static Benchmarks wired(String mode, Map<String, String> more) {
    Map<String, String> settings = new HashMap<>(stack.environment());
    settings.put("ANALYSIS_MODE", mode);
    settings.putAll(more);
    Benchmarks clients = Benchmarks.of(Settings.of(settings), () -> counted, Log.stdout());
    wired.add(clients);
    return clients;
  }

  private static DocumentSource upload() {
    int n = ++documents;
    return CostBench.source(stack.upload("counts/invoice-" + n + ".pdf", InvoicePdf.of("K-" + n)));
  }
}
