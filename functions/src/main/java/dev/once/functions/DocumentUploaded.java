package dev.once.functions;

import com.google.cloud.functions.CloudEventsFunction;
import dev.once.entry.EventEntry;
import dev.once.entry.StorageObject;
import dev.once.functions.analysis.DocumentFlow;
import dev.once.pipeline.DocumentSource;
import io.cloudevents.CloudEvent;

/**
 * Entry point for {@code google.cloud.storage.object.v1.finalized}: a document was uploaded to the inbox (see
 * DocumentFlow). Its settings are checked when the instance starts, so a deployment that lacks one fails to start.
 */
public final class DocumentUploaded implements CloudEventsFunction {
  static final String NAME = "DocumentUploaded";
  private final EventEntry<DocumentSource> entry;

  public DocumentUploaded() {
    this(Clients.instance());
  }

  DocumentUploaded(Clients clients) {
    DocumentFlow flow = Wiring.documentFlow(clients);
    entry = EventEntry.of(NAME, event -> DocumentSource.of(StorageObject.from(event)), DocumentFlow::key, flow::handle);
  }

  @Override
  public void accept(CloudEvent event) {
    entry.accept(event);
  }
}
