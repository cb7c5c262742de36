package dev.once.gemini;

import com.google.genai.Client;
import com.google.genai.Pager;
import com.google.genai.errors.ApiException;
import com.google.genai.types.BatchJob;
import com.google.genai.types.BatchJobSource;
import com.google.genai.types.CreateBatchJobConfig;
import com.google.genai.types.InlinedRequest;
import com.google.genai.types.JobState;
import com.google.genai.types.ListBatchJobsConfig;
import com.google.genai.types.WebhookConfig;
import dev.once.key.IdempotencyKey;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/** Gemini batch jobs of the batch mode: one job per document, then its state and results. */
public final class BatchJobs {
  /** Metadata naming the document, on the request (echoed on its response) and on the job's webhook. */
  public static final String DOCUMENT_KEY = "document_key";
  /**
   * A job's display name is this and its document's id (the SHA-256 of its key): what listing and getting a job show
   * of it (the SDK exposes neither a job's requests nor its webhook metadata until it succeeded), so a retried
   * submission can find the job an earlier try made, and a completion can tell whose job it is.
   */
  public static final String DISPLAY_NAME_PREFIX = "once ";
  /** How far back, before the earliest earlier try, a job of a retried submission is looked for (clock skew). */
  static final java.time.Duration LOOK_BACK = java.time.Duration.ofMinutes(2);
  /** At most this many pages of jobs are listed to find one (newest first). */
  static final int FIND_PAGES = 20;

  private static final Set<JobState.Known> TERMINAL = Set.of(
      JobState.Known.JOB_STATE_SUCCEEDED,
      JobState.Known.JOB_STATE_FAILED,
      JobState.Known.JOB_STATE_CANCELLED,
      JobState.Known.JOB_STATE_EXPIRED,
      JobState.Known.JOB_STATE_PARTIALLY_SUCCEEDED);

  private final Client client;
  private final String model;
  private final Optional<String> webhookUrl;

  /** @param webhookUrl where Gemini posts each job's completion (dynamic webhooks); empty: the registered ones */
  public BatchJobs(Client client, String model, Optional<String> webhookUrl) {
    this.client = client;
    this.model = model;
    this.webhookUrl = webhookUrl;
  }

  /**
   * Creates the job. batches.create is not idempotent, so it runs inside a claim and the SDK must not repeat it
   * on its own (its default retries POSTs on 5xx and timeouts, which could create two jobs).
   */
  public BatchJob submit(IdempotencyKey documentKey, byte[] document, String mimeType) {
    WebhookConfig.Builder webhook = WebhookConfig.builder();
    webhookUrl.ifPresent(webhook::uris); // a dynamic webhook: no project-level registration needed
    InlinedRequest request = InlinedRequest.builder()
        .contents(List.of(InvoicePrompt.content(document, mimeType)))
        .config(InvoicePrompt.config().build())
        .metadata(Map.of(DOCUMENT_KEY, documentKey.value()))
        .build();
    CreateBatchJobConfig config = CreateBatchJobConfig.builder()
        .displayName(displayName(documentKey))
        .webhookConfig(webhook.userMetadata(Map.of(DOCUMENT_KEY, documentKey.value())).build())
        .httpOptions(GeminiClients.noRetries())
        .build();
    return client.batches.create(model, BatchJobSource.builder().inlinedRequests(request).build(), config);
  }

  public static String displayName(IdempotencyKey documentKey) {
    return DISPLAY_NAME_PREFIX + documentKey.documentId();
  }

  /** The id of the document a job of this pipeline was made for, read from its display name; empty for others'. */
  public static Optional<String> documentId(BatchJob job) {
    return job.displayName()
        .filter(name -> name.startsWith(DISPLAY_NAME_PREFIX))
        .map(name -> name.substring(DISPLAY_NAME_PREFIX.length()))
        .filter(id -> id.matches("[0-9a-f]{64}"));
  }

  /**
   * The job an earlier try of this document's submission made, if Gemini has one: the newest with the document's
   * display name created since {@code since} (less {@link #LOOK_BACK}), looking at most {@link #FIND_PAGES} pages
   * of the listing, newest first. What a retried submission adopts instead of creating a second paid job.
   */
  public Optional<BatchJob> findSubmitted(IdempotencyKey documentKey, java.time.Instant since) {
    String wanted = displayName(documentKey);
    java.time.Instant oldest = since.minus(LOOK_BACK);
    Pager<BatchJob> pager = list(50);
    for (int page = 1; ; page++) {
      for (BatchJob job : pager.page()) {
        if (job.displayName().map(wanted::equals).orElse(false)) {
          return Optional.of(job);
        }
        if (job.createTime().map(created -> created.isBefore(oldest)).orElse(false)) {
          return Optional.empty();
        }
      }
      if (page >= FIND_PAGES) {
        return Optional.empty();
      }
      try {
        pager.nextPage();
      } catch (IndexOutOfBoundsException lastPage) {
        return Optional.empty();
      }
    }
  }

  /** Cancels a job still running (a stray second job); Gemini answers an ended one with an error, ignored here. */
  public void cancel(String name) {
    client.batches.cancel(name, null);
  }

  /** The job, or empty when Gemini has none by that name (404: deleted, or gone past Gemini's own retention). */
  public Optional<BatchJob> find(String name) {
    try {
      return Optional.of(client.batches.get(name, null));
    } catch (ApiException e) {
      if (e.code() == 404) {
        return Optional.empty();
      }
      throw e;
    }
  }

  /** Every answer of a finished job: inlined, or in its responses file (downloaded to a temporary file). */
  public List<BatchResult> results(BatchJob job) {
    String jobModel = job.model().map(m -> m.startsWith("models/") ? m.substring("models/".length()) : m).orElse(model);
    Optional<String> file = job.dest().flatMap(d -> d.fileName());
    if (job.dest().flatMap(d -> d.inlinedResponses()).isPresent() || file.isEmpty()) {
      return BatchResult.inlined(job, jobModel);
    }
    java.nio.file.Path download = null;
    try {
      download = java.nio.file.Files.createTempFile("once-batch-", ".jsonl");
      client.files.download(file.get(), download.toString(), null);
      return BatchResult.fromFile(java.nio.file.Files.readAllBytes(download), jobModel);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException("could not read the responses file " + file.get(), e);
    } finally {
      if (download != null) {
        download.toFile().delete();
      }
    }
  }

  /** The first page of jobs; {@link Pager#nextPage()} fetches the next one. */
  public Pager<BatchJob> list(int pageSize) {
    return client.batches.list(ListBatchJobsConfig.builder().pageSize(pageSize).build());
  }

  public static boolean isTerminal(BatchJob job) {
    return state(job).map(TERMINAL::contains).orElse(false);
  }

  public static Optional<JobState.Known> state(BatchJob job) {
    return job.state().map(JobState::knownEnum);
  }

  public static boolean succeeded(BatchJob job) {
    return state(job).map(s -> s == JobState.Known.JOB_STATE_SUCCEEDED || s == JobState.Known.JOB_STATE_PARTIALLY_SUCCEEDED)
        .orElse(false);
  }
}
