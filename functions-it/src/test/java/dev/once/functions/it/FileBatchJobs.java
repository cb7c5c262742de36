package dev.once.functions.it;

import com.google.cloud.firestore.FieldValue;
import com.google.cloud.firestore.Firestore;
import com.google.cloud.firestore.SetOptions;
import com.google.cloud.firestore.WriteBatch;
import com.google.genai.types.BatchJobSource;
import com.google.genai.types.CreateBatchJobConfig;
import com.google.genai.types.UploadFileConfig;
import dev.once.budget.Reservation;
import dev.once.config.Settings;
import dev.once.gemini.BatchInput;
import dev.once.gemini.BatchJobs;
import dev.once.gemini.JobNames;
import dev.once.gemini.PriceTable;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.DocumentWrites;
import dev.once.local.samples.InvoicePdf;
import dev.once.pipeline.DocumentSource;
import dev.once.pipeline.Gatherings;
import dev.once.pipeline.RecordWrites;
import java.io.ByteArrayOutputStream;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;

/**
 * Batch jobs whose answers come in a responses file, which the completion downloads (files.download). Gemini answers
 * inline requests inline ({@code GenerateContentBatchOutput.inlined_responses}: "returned when the batch was built
 * using inlined requests", ai.google.dev/api/batch-api); a job built from an input file is answered in a file. The
 * pipeline makes those only for jobs over the inline limit, so these jobs are made here from files, through the SDK,
 * as the pipeline gathers them: several documents per job, each line the pipeline's input line ({@link BatchInput}),
 * the display name naming a gathering; each submission recorded as the pipeline records its own: the gathering
 * sealed with its members and submitted, and every member's analysis {@code submitted}, naming the job and the
 * gathering.
 */
final class FileBatchJobs {
  private static final String MODEL = "gemini-3.5-flash-lite";

  private FileBatchJobs() {}

  /**
   * Submits {@code cell}'s documents (never uploaded: the keys name generation 1) as gathered file jobs of
   * {@code perJob} requests each, one input line per document keyed by its key; returns key → job.
   */
  static Map<String, String> submit(MatrixStack matrix, String cell, int perJob) {
    RecordWrites records = new RecordWrites(PriceTable.fromSettings(Settings.of(Map.of())));
    Map<String, String> jobs = new LinkedHashMap<>();
    WriteBatch submissions = matrix.stack.db.batch();
    for (int first = 0; first < MatrixStack.DOCUMENTS; first += perJob) {
      String gathering = UUID.randomUUID().toString().replace("-", "");
      ByteArrayOutputStream input = new ByteArrayOutputStream();
      Map<IdempotencyKey, DocumentSource> members = new LinkedHashMap<>();
      for (int i = first; i < Math.min(first + perJob, MatrixStack.DOCUMENTS); i++) {
        String name = String.format("%s/doc-%02d.pdf", MatrixStack.folder(cell), i);
        IdempotencyKey key = IdempotencyKey.of("gcs:" + PipelineStack.BUCKET + "/" + name + "#1");
        byte[] pdf = InvoicePdf.of(cell + "-" + i);
        input.writeBytes(BatchInput.line(BatchJobs.Request.of(gathering, key, pdf, "application/pdf"), MODEL));
        input.write('\n');
        members.put(key, new DocumentSource(PipelineStack.BUCKET, name, 1, "application/pdf", pdf.length, null, null));
      }
      String file = matrix.gemini.files.upload(input.toByteArray(),
          UploadFileConfig.builder().mimeType("application/jsonl").build()).name().orElseThrow();
      String job = matrix.gemini.batches.create(MODEL, BatchJobSource.builder().fileName(file).build(),
          CreateBatchJobConfig.builder().displayName(JobNames.gatheringName(gathering)).build()).name().orElseThrow();
      DocumentWrites writes = writing(matrix.stack.db, submissions, gathering);
      members.forEach((key, source) -> {
        jobs.put(key.value(), job);
        records.submitted(key, source, job, Reservation.NONE).addTo(writes);
      });
      Gatherings.submitted(gathering, job, members.size()).addTo(writes);
      submissions.set(matrix.stack.db.collection(Gatherings.COLLECTION).document(gathering),
          Map.of("inFlight", true, "openedAt", FieldValue.serverTimestamp(), "members",
              members.keySet().stream().map(IdempotencyKey::documentId).toList()),
          SetOptions.merge());
    }
    try {
      submissions.commit().get();
    } catch (Exception e) {
      throw new IllegalStateException("could not record the submissions", e);
    }
    return jobs;
  }

  /**
   * Writes added to {@code batch}, with the commit's time where the pipeline asks for it; an analysis names the
   * gathering its document joined, as the pipeline's gathering does ({@code batch}).
   */
  private static DocumentWrites writing(Firestore db, WriteBatch batch, String gathering) {
    return new DocumentWrites() {
      @Override
      public void create(String collection, String id, Map<String, Object> fields) {
        batch.create(db.collection(collection).document(id), resolved(collection, fields));
      }

      @Override
      public void set(String collection, String id, Map<String, Object> fields) {
        batch.set(db.collection(collection).document(id), resolved(collection, fields));
      }

      @Override
      public void merge(String collection, String id, Map<String, Object> fields) {
        batch.set(db.collection(collection).document(id), resolved(collection, fields), SetOptions.merge());
      }

      private Map<String, Object> resolved(String collection, Map<String, Object> fields) {
        Map<String, Object> resolved = FileBatchJobs.resolved(fields);
        if (collection.equals(RecordWrites.ANALYSES)) {
          resolved.put("batch", gathering);
        }
        return resolved;
      }
    };
  }

  private static Map<String, Object> resolved(Map<String, Object> fields) {
    Map<String, Object> resolved = new HashMap<>(fields);
    resolved.replaceAll(
        (name, value) -> value == DocumentWrites.Special.SERVER_TIME ? FieldValue.serverTimestamp() : value);
    return resolved;
  }
}
