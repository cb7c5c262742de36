package dev.once.functions;

import dev.once.pipeline.PipelineSetting;
import com.google.cloud.functions.CloudEventsFunction;
import dev.once.config.Settings;
import dev.once.pipeline.DocumentSource;
import dev.once.key.InvalidKey;
import dev.once.observe.EventLog;
import io.cloudevents.CloudEvent;
import java.util.Locale;
import java.util.Map;

/**
 * Entry point for {@code google.cloud.storage.object.v1.finalized}: a document was uploaded to the inbox. A
 * malformed event is logged and acknowledged without any ledger write; an event another delivery is working on
 * is thrown back, so the platform redelivers it; any other failure is thrown too (retry).
 */
public final class DocumentUploaded implements CloudEventsFunction {
  static final String NAME = "DocumentUploaded";
  private static final Lazy<DocumentFlow> FLOW = Lazy.of(() -> wire(Clients.instance()));

  static DocumentFlow wire(Clients clients) {
    Settings settings = clients.settings;
    return new DocumentFlow(clients.once.get(), clients.records, Lazy.of(() -> new DocumentReader(clients.storage.get())),
        clients.analyzer, clients.batchJobs, clients.resultPublication(), mode(settings),
        settings.positiveLong(PipelineSetting.MAX_DOCUMENT_BYTES));
  }

  static DocumentFlow.Mode mode(Settings settings) {
    String mode = settings.required(PipelineSetting.ANALYSIS_MODE).toLowerCase(Locale.ROOT);
    return switch (mode) {
      case "sync" -> DocumentFlow.Mode.SYNC;
      case "batch" -> DocumentFlow.Mode.BATCH;
      default -> throw new dev.once.config.MissingSetting("ANALYSIS_MODE must be sync or batch, got \"" + mode + "\"");
    };
  }

  @Override
  public void accept(CloudEvent event) {
    long started = System.nanoTime();
    DocumentSource document;
    try {
      document = StorageEvents.read(event);
    } catch (MalformedEvent e) {
      EventLog.refused(NAME, e.getMessage(), started, "eventId", String.valueOf(event.getId()));
      return;
    }
    EventReport report;
    try {
      report = FLOW.get().handle(document);
    } catch (InvalidKey e) {
      EventLog.refused(NAME, e.getMessage(), started, "eventId", String.valueOf(event.getId()));
      return;
    } catch (RuntimeException e) {
      EventLog.record(NAME, null, "none", EventLog.FAILED, 0, EventLog.elapsedMs(started),
          Map.of("error", String.valueOf(e), "eventId", String.valueOf(event.getId()),
              "object", document.bucket() + "/" + document.name() + "#" + document.generation()));
      throw e;
    }
    EventLog.record(NAME, report.key(), report.effect(), report.outcome(), report.attempts(), EventLog.elapsedMs(started),
        Map.of("effects", report.effects(), "eventId", String.valueOf(event.getId())));
    if (report.inFlight()) {
      throw new Redeliver(report.key() + " is being processed by another delivery; redeliver later");
    }
  }
}
