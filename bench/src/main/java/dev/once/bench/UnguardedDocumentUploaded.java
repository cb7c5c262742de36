package dev.once.bench;

import com.google.cloud.functions.CloudEventsFunction;
import dev.once.functions.Benchmarks;
import dev.once.gemini.Analysis;
import dev.once.key.IdempotencyKey;
import dev.once.pipeline.DocumentSource;
import dev.once.pipeline.PipelineSetting;
import dev.once.pipeline.RecordWrites;
import dev.once.pipeline.ResultMessage;
import io.cloudevents.CloudEvent;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The cold-start baseline a user would deploy without {@code once} (dev/bench coldstart): DocumentUploaded's work
 * with the same clients, built as lazily — read the object at its generation, analyse it with Gemini, write the
 * analysis with a plain {@code set}, publish the result — and no ledger. Packaged alone in
 * {@code once-bench-*-unguarded.jar}, served with the deploy jar on the invoker's class path.
 */
public final class UnguardedDocumentUploaded implements CloudEventsFunction {
  private final Benchmarks clients = Benchmarks.instance();
  private final long maxBytes = clients.settings().positiveLong(PipelineSetting.MAX_DOCUMENT_BYTES);
  private final String topic = clients.topic(PipelineSetting.RESULTS_TOPIC);

  @Override
  public void accept(CloudEvent event) throws Exception {
    DocumentSource document = Benchmarks.document(event);
    IdempotencyKey key = Benchmarks.key(document);
    byte[] content = clients.read(document, maxBytes);
    Analysis analysis = clients.analyzer().analyse(content, document.mimeType());
    ResultMessage result = ResultMessage.analysed(key, document, analysis, null);
    clients.firestore().collection(RecordWrites.ANALYSES).document(key.documentId())
        .set(ResultMessage.CODEC.encode(result))
        .get(30, TimeUnit.SECONDS);
    clients.publisher().publish(topic, result.json(), Map.of("idempotency_key", key.value()));
  }
}
