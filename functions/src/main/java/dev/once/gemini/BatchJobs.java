package dev.once.gemini;

import com.google.genai.Client;
import com.google.genai.Pager;
import com.google.genai.errors.ApiException;
import com.google.genai.types.BatchJob;
import com.google.genai.types.BatchJobSource;
import com.google.genai.types.CreateBatchJobConfig;
import com.google.genai.types.InlinedRequest;
import com.google.genai.types.ListBatchJobsConfig;
import com.google.genai.types.WebhookConfig;
import dev.once.key.IdempotencyKey;
import dev.once.observe.Log;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;

/**
 * Gemini batch jobs of the batch mode: a job of many documents ({@link #submit(String, List)}), then its state and
 * results. Jobs made before gathering existed hold one document each ({@link JobNames#documentId}).
 */
public final class BatchJobs {
  /** Metadata naming the document, on the request (echoed on its response) and on the job's webhook. */
  public static final String DOCUMENT_KEY = "document_key";
  /**
   * Jobs asked for per page when looking for one: Google's list methods coerce a page size above their maximum down
   * to it (AIP-158), so asking for many costs nothing and saves calls.
   */
  static final int FIND_PAGE_SIZE = 1000;
  /**
   * Past this many pages the look is given up as unfinished (an error, so the caller tries again later), never as
   * "no job": a project with more jobs than this is not what batch mode is sized for.
   */
  static final int FIND_MAX_PAGES = 500;

  /**
   * The most the inlined requests of one job may take: Gemini's inline requests suit "smaller batches that keep the
   * total request size under 20MB" (ai.google.dev/gemini-api/docs/batch-api), less a margin for what the JSON of the
   * request adds around them (the JSONL lines measured here hold the same requests).
   */
  public static final long DEFAULT_INLINE_MAX_BYTES = 19_000_000;

  private final Client client;
  private final String model;
  private final Optional<String> webhookUrl;
  private final long inlineMaxBytes;
  private final BatchInputFiles inputFiles;
  private final ModelWatch watch;
  private final JobErrors errors;

  /** @param webhookUrl where Gemini posts each job's completion (dynamic webhooks); empty: the registered ones */
  public BatchJobs(Client client, String model, Optional<String> webhookUrl) {
    this(client, model, webhookUrl, DEFAULT_INLINE_MAX_BYTES);
  }

  /** @param inlineMaxBytes the most a job's requests may take inlined; a larger job is made from an input file */
  public BatchJobs(Client client, String model, Optional<String> webhookUrl, long inlineMaxBytes) {
    this(client, model, webhookUrl, inlineMaxBytes, new ModelWatch(Log.stdout()));
  }

  /** @param watch says once when Google refuses the model, or answers a job's requests with another one */
  public BatchJobs(Client client, String model, Optional<String> webhookUrl, long inlineMaxBytes, ModelWatch watch) {
    this(client, model, webhookUrl, inlineMaxBytes, watch, null);
  }

  /** @param errors reads why a job failed, which the SDK does not (null: the SDK's {@code BatchJob.error()} only) */
  public BatchJobs(Client client, String model, Optional<String> webhookUrl, long inlineMaxBytes, ModelWatch watch,
      JobErrors errors) {
    this.errors = errors;
    this.client = client;
    this.model = model;
    this.webhookUrl = webhookUrl;
    this.inlineMaxBytes = inlineMaxBytes;
    this.inputFiles = new BatchInputFiles(client, watch.log());
    this.watch = watch;
  }

  /**
   * One document of a job: its key (echoed on its answer, when Gemini echoes it), its content and type, and its
   * reference in this job ({@link #reference}), which its answer copies.
   */
  public record Request(IdempotencyKey documentKey, byte[] content, String mimeType, String reference) {
    /** The document's request in the gathering's job. */
    public static Request of(String gatheringId, IdempotencyKey documentKey, byte[] content, String mimeType) {
      return new Request(documentKey, content, mimeType, JobNames.reference(gatheringId, documentKey.documentId()));
    }
  }

  /**
   * Why the job ended as it did, when Gemini says: the SDK's {@code error()}, else the operation's own (read from
   * Gemini: {@link JobErrors}). Empty when neither gives one.
   */
  public Optional<BatchError> failure(BatchJob job) {
    Optional<BatchError> known = job.error().map(BatchResult::error);
    if (known.isPresent() || errors == null || job.name().isEmpty()) {
      return known;
    }
    return errors.of(job.name().get());
  }

  /** How a job's requests are sent. */
  public enum Input {
    /** Inlined while they stay under the inline limit, else an input file. */
    INLINED_WHEN_SMALL,
    /**
     * An input file whatever their size: each line keyed ({@code key}). For documents run again because an earlier job's
     * answers could not be matched to them (users found the file's keys more dependable than inlined metadata,
     * googleapis/python-genai#1909), and for a job Gemini refused as too large inlined.
     */
    FILE
  }

  /**
   * The most an input file may hold: the Files API's "per-file maximum size of 2 GB"
   * (ai.google.dev/gemini-api/docs/files), read as 2,000,000,000 bytes, the cautious reading.
   */
  public static final long MAX_INPUT_FILE_BYTES = 2_000_000_000L;

  /**
   * Creates a job of these documents' requests, named after its gathering: inlined while the whole inlined request
   * stays under the inline limit ({@code inlineMaxBytes}), else from the JSONL input file ({@link BatchInput}, each
   * line keyed by its document's key), uploaded first under the gathering's own name ({@link BatchInputFiles}).
   * batches.create is not idempotent: run this inside a claim, without the SDK's own retries.
   *
   * @throws NotSubmitted when the input file could not be stored (no job was asked for)
   */
  public BatchJob submit(String gatheringId, List<Request> requests) {
    return submit(gatheringId, requests, Input.INLINED_WHEN_SMALL, file -> {});
  }

  /**
   * As {@link #submit(String, List)}, sent as {@code how} says, running {@code beforeCreate} right before batches.create
   * with the name of the input file the job is made from (empty: inlined), after an upload that may have taken a
   * while: where the claim's lease is made to outlast the paid call, and the file's name is recorded, so that it is
   * deleted once the job ended (whichever name the Files API gave it).
   */
  public BatchJob submit(String gatheringId, List<Request> requests, Input how,
      Consumer<Optional<String>> beforeCreate) {
    BatchInput input = BatchInput.of(requests, model);
    BatchJobSource source;
    Optional<String> file = Optional.empty();
    if (input.size() > MAX_INPUT_FILE_BYTES) {
      throw new InputTooLarge(
          "the job's requests would be " + input.size() + " bytes of JSONL, over the Files API's 2 GB"
              + " per input file");
    }
    if (how == Input.INLINED_WHEN_SMALL && input.size() <= inlineMaxBytes) {
      source = BatchJobSource.builder().inlinedRequests(requests.stream().map(this::inlined).toList()).build();
    } else {
      try {
        file = Optional.of(inputFiles.put(gatheringId, input));
        source = BatchJobSource.builder().fileName(file.get()).build();
      } catch (BatchInputFiles.NotStored e) {
        throw new NotSubmitted(e.getMessage(), e);
      }
    }
    WebhookConfig.Builder webhook = WebhookConfig.builder();
    webhookUrl.ifPresent(webhook::uris);
    CreateBatchJobConfig config = CreateBatchJobConfig.builder()
        .displayName(JobNames.gatheringName(gatheringId))
        .webhookConfig(webhook.build())
        .httpOptions(GeminiClients.noRetries())
        .build();
    beforeCreate.accept(file);
    try {
      return client.batches.create(model, source, config);
    } catch (RuntimeException e) {
      throw watch.failed(model, e);
    }
  }

  private InlinedRequest inlined(Request request) {
    return InlinedRequest.builder()
        .contents(List.of(InvoicePrompt.batchContent(request.content(), request.mimeType(), request.reference())))
        .config(InvoicePrompt.batchConfig(model).build())
        .metadata(Map.of(DOCUMENT_KEY, request.documentKey().value()))
        .build();
  }

  /**
   * Deletes the input file a job was made from, once it ended (its answers are read): best effort, never throwing.
   * Called only for a job made from a file, by the name its submission recorded.
   */
  public void deleteInput(String fileName) {
    inputFiles.delete(fileName);
  }

  /** A job of one document, named after it: how jobs were made before gathering existed. Not idempotent either. */
  public BatchJob submit(IdempotencyKey documentKey, byte[] document, String mimeType) {
    WebhookConfig.Builder webhook = WebhookConfig.builder();
    webhookUrl.ifPresent(webhook::uris); // a dynamic webhook: no project-level registration needed
    CreateBatchJobConfig config = CreateBatchJobConfig.builder()
        .displayName(JobNames.displayName(documentKey))
        .webhookConfig(webhook.userMetadata(Map.of(DOCUMENT_KEY, documentKey.value())).build())
        .httpOptions(GeminiClients.noRetries())
        .build();
    InlinedRequest request = InlinedRequest.builder()
        .contents(List.of(InvoicePrompt.content(document, mimeType)))
        .config(InvoicePrompt.config(model).build())
        .metadata(Map.of(DOCUMENT_KEY, documentKey.value()))
        .build();
    return client.batches.create(model, BatchJobSource.builder().inlinedRequests(request).build(), config);
  }

  /**
   * The job an earlier try of this document's submission made, if Gemini has one: a job with the document's display
   * name, looked for through the whole listing. What a retried submission adopts instead of creating a second paid
   * job, so nothing here may rest on what Google does not document: {@code batches.list} documents neither an order
   * nor, on the Gemini Developer API, a filter (the SDK refuses {@code filter} outside Vertex AI), so no page can tell
   * that the rest holds no such job; only the last page can. What is documented is that the listing pages through
   * the project's jobs and that {@code displayName} is set by the caller and required ("Required. The user-defined
   * name of this batch.", ai.google.dev/api/batch-mode). Should several jobs carry the name (a stray from before
   * adoption existed), the oldest is adopted, whatever the listing's order; the reconciler cancels the others.
   *
   * @throws IllegalStateException when the listing is longer than {@link #FIND_MAX_PAGES} pages: not finding the
   *     job there proves nothing
   */
  public Optional<BatchJob> findSubmitted(IdempotencyKey documentKey) {
    return findNamed(JobNames.displayName(documentKey));
  }

  /** The job an earlier try of this gathering's submission made, if Gemini has one: as for a document's, above. */
  public Optional<BatchJob> findGathered(String gatheringId) {
    return findNamed(JobNames.gatheringName(gatheringId));
  }

  private Optional<BatchJob> findNamed(String wanted) {
    Optional<BatchJob> oldest = Optional.empty();
    Pager<BatchJob> pager = list(FIND_PAGE_SIZE);
    for (int page = 1;; page++) {
      for (BatchJob job : pager.page()) {
        if (job.displayName().map(wanted::equals).orElse(false) && (oldest.isEmpty() || older(job, oldest.get()))) {
          oldest = Optional.of(job);
        }
      }
      try {
        pager.nextPage();
      } catch (IndexOutOfBoundsException lastPage) {
        return oldest;
      }
      if (page >= FIND_MAX_PAGES) {
        throw new IllegalStateException("the batch jobs' listing has more than " + FIND_MAX_PAGES
            + " pages: the job an earlier try may have made cannot be ruled out");
      }
    }
  }

  private static boolean older(BatchJob job, BatchJob than) {
    Instant created = job.createTime().orElse(Instant.MAX);
    Instant other = than.createTime().orElse(Instant.MAX);
    return created.isBefore(other)
        || created.equals(other) && job.name().orElse("").compareTo(than.name().orElse("")) < 0;
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

  /**
   * Every answer a job that ended returned, whatever its state (one that failed, expired or was cancelled may have
   * answered some requests, and Google bills those): inlined, or in its responses file (downloaded to a temporary
   * file); none when it returned nothing.
   */
  public List<BatchResult> results(BatchJob job) {
    String jobModel = job.model().map(m -> m.startsWith("models/") ? m.substring("models/".length()) : m).orElse(model);
    // Billed on the day the job ended, by Google's clock: its answers were all made by then.
    Instant answeredAt = job.endTime().or(job::updateTime).or(job::createTime).orElse(null);
    Optional<String> file = job.dest().flatMap(d -> d.fileName());
    List<BatchResult> results = job.dest().flatMap(d -> d.inlinedResponses()).isPresent() || file.isEmpty()
        ? BatchResult.inlined(job, jobModel, answeredAt)
        : ResponsesFile.read(client, file.get(), jobModel, answeredAt);
    results.forEach(result -> result.analysis().ifPresent(watch::answered));
    return results;
  }

  /** The first page of jobs; {@link Pager#nextPage()} fetches the next one. */
  public Pager<BatchJob> list(int pageSize) {
    return client.batches.list(ListBatchJobsConfig.builder().pageSize(pageSize).build());
  }
}
