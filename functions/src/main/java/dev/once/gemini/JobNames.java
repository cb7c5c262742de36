package dev.once.gemini;

import com.google.genai.types.BatchJob;
import dev.once.key.IdempotencyKey;
import dev.once.key.Sha256;
import java.util.Optional;

/**
 * How this pipeline names its batch jobs and its documents in them: what listing and getting a job show of it (the SDK
 * exposes neither a job's requests nor its webhook metadata until it succeeded), so a retried submission finds the job
 * an earlier try made, a completion tells whose job it is, and an answer is known to be its document's.
 */
public final class JobNames {
  /**
   * A job's display name is this and its document's id (the SHA-256 of its key): what listing and getting a job show
   * of it (the SDK exposes neither a job's requests nor its webhook metadata until it succeeded), so a retried
   * submission can find the job an earlier try made, and a completion can tell whose job it is.
   */
  public static final String DISPLAY_NAME_PREFIX = "once ";
  /**
   * A gathered job's display name is this and its gathering's id: the one name every try of its submission gives it,
   * so a retry adopts the job an earlier try made ({@link BatchJobs#findGathered(String)}).
   */
  public static final String GATHERING_PREFIX = "once job ";

  private JobNames() {}

  /**
   * A document's reference in a gathering's job: 16 hex digits of the SHA-256 of the gathering's id (random, 128 bits)
   * and the document's id. The model copies it from the request into the answer ({@link InvoiceSchema#REFERENCE}),
   * which is how an answer is known to be its document's ({@link BatchAnswers}). It cannot be guessed from outside,
   * so a document that asks the model to copy another reference cannot have its answer filed to another document, and
   * it differs from job to job, so an answer from an earlier job of the same document never matches.
   */
  public static String reference(String gatheringId, String documentId) {
    return Sha256.hex(gatheringId + "/" + documentId).substring(0, 16);
  }

  public static String gatheringName(String gatheringId) {
    return GATHERING_PREFIX + gatheringId;
  }

  /** The id of the gathering a gathered job was made for, read from its display name; empty for any other job. */
  public static Optional<String> gatheringId(BatchJob job) {
    return job.displayName()
        .filter(name -> name.startsWith(GATHERING_PREFIX))
        .map(name -> name.substring(GATHERING_PREFIX.length()))
        .filter(id -> id.matches("[0-9a-f]{32}"));
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
}
