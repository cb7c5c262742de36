package dev.once.functions.it;

import com.google.cloud.firestore.FieldValue;
import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.WriteBatch;
import com.google.genai.types.BatchJobSource;
import com.google.genai.types.CreateBatchJobConfig;
import com.google.genai.types.UploadFileConfig;
import dev.once.config.Settings;
import dev.once.gemini.BatchInput;
import dev.once.gemini.BatchJobs;
import dev.once.gemini.PriceTable;
import dev.once.internal.budget.Reservation;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.DocumentWrites;
import dev.once.local.samples.InvoicePdf;
import dev.once.pipeline.DocumentSource;
import dev.once.pipeline.Records;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Batch jobs whose answers come in a responses file, which the completion downloads (files.download). Gemini answers
 * inline requests inline ({@code GenerateContentBatchOutput.inlined_responses}: "returned when the batch was built
 * using inlined requests", ai.google.dev/api/batch-api); a job built from an input file is answered in a file. The
 * pipeline makes those only for jobs over the inline limit, so these jobs are made here from files, through the SDK,
 * one per document with the pipeline's input line ({@link BatchInput}) and display name, and each submission recorded
 * as DocumentUploaded records its own: the document's analysis {@code submitted}, naming the job.
 */
final class FileBatchJobs {
  private static final String MODEL = "gemini-2.5-flash";

  private FileBatchJobs() {}

  /** Submits one file job per document of {@code cell} (never uploaded: the key names generation 1); key → job. */
  static Map<String, String> submit(MatrixStack matrix, String cell) {
    Records records = new Records(PriceTable.fromSettings(Settings.of(Map.of())));
    Map<String, String> jobs = new LinkedHashMap<>();
    WriteBatch submissions = matrix.stack.db.batch();
    for (int i = 0; i < MatrixStack.DOCUMENTS; i++) {
      String name = String.format("%s/doc-%02d.pdf", MatrixStack.folder(cell), i);
      IdempotencyKey key = IdempotencyKey.of("gcs:" + PipelineStack.BUCKET + "/" + name + "#1");
      byte[] pdf = InvoicePdf.of(cell + "-" + i);
      String input = matrix.gemini.files.upload(BatchInput.line(new BatchJobs.Request(key, pdf, "application/pdf")),
          UploadFileConfig.builder().mimeType("application/jsonl").build()).name().orElseThrow();
      String job = matrix.gemini.batches.create(MODEL, BatchJobSource.builder().fileName(input).build(),
          CreateBatchJobConfig.builder().displayName(BatchJobs.displayName(key)).build()).name().orElseThrow();
      jobs.put(key.value(), job);
      DocumentSource source = new DocumentSource(PipelineStack.BUCKET, name, 1, "application/pdf", pdf.length, null,
          null);
      records.submitted(key, source, job, Reservation.NONE).addTo(writing(matrix.stack.db, submissions));
    }
    try {
      submissions.commit().get();
    } catch (Exception e) {
      throw new IllegalStateException("could not record the submissions", e);
    }
    return jobs;
  }

  /** Document creations added to {@code batch}, with the commit's time where the pipeline asks for it. */
  private static DocumentWrites writing(Firestore db, WriteBatch batch) {
    return new DocumentWrites() {
      @Override
      public void create(String collection, String id, Map<String, Object> fields) {
        batch.create(db.collection(collection).document(id), resolved(fields));
      }

      @Override
      public void set(String collection, String id, Map<String, Object> fields) {
        batch.set(db.collection(collection).document(id), resolved(fields));
      }

      @Override
      public void merge(String collection, String id, Map<String, Object> fields) {
        throw new UnsupportedOperationException("a submission creates or replaces its analysis");
      }
    };
  }

  private static Map<String, Object> resolved(Map<String, Object> fields) {
    Map<String, Object> resolved = new HashMap<>(fields);
    resolved.replaceAll((name, value) -> value == DocumentWrites.Special.SERVER_TIME ? FieldValue.serverTimestamp() : value);
    return resolved;
  }
}
