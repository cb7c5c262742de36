package dev.once.functions;

import com.google.cloud.functions.HttpFunction;
import com.google.cloud.functions.HttpRequest;
import com.google.cloud.functions.HttpResponse;
import dev.once.entry.HttpAnswer;
import dev.once.functions.reconcile.GaugeLine;
import dev.once.functions.reconcile.ReconcileFlow;
import dev.once.functions.reconcile.ReconcileSummary;
import dev.once.observe.Log;
import java.io.IOException;
import java.util.Map;

/**
 * Entry point for Cloud Scheduler (HTTP, private: the scheduler calls it with an OIDC token). Runs one bounded
 * reconciliation (see ReconcileFlow) and answers its summary; 503 when Gemini cannot be listed at all; 405 to
 * anything but a POST. Every run, whatever it came to, also logs the batch gauges (GaugeLine).
 */
public final class GeminiReconciler implements HttpFunction {
  public static final String NAME = ReconcileFlow.FUNCTION;
  private final ReconcileFlow flow;
  private final GaugeLine gauges;
  private final Log log;

  public GeminiReconciler() {
    this(Clients.instance());
  }

  GeminiReconciler(Clients clients) {
    flow = Wiring.reconcileFlow(clients);
    gauges = Wiring.gaugeLine(clients);
    log = clients.once.log();
  }

  @Override
  public void service(HttpRequest request, HttpResponse response) throws IOException {
    // Cloud Scheduler POSTs. A GET (a health check, a browser) must not start a run: runs that overlap contend
    // for the same claims.
    if (HttpAnswer.refusedUnlessPost(request, response)) {
      return;
    }
    ReconcileSummary summary;
    try {
      summary = flow.run();
    } catch (RuntimeException e) {
      log.error("the reconciler could not list batch jobs", Map.of("function", NAME, "error", String.valueOf(e)));
      gauges.log();
      HttpAnswer.send(response, 503, "unavailable");
      return;
    }
    log.info("reconciliation run", Map.of("function", NAME, "summary", summary.toMap()));
    gauges.log();
    HttpAnswer.send(response, 200, summary.truncated ? "partial" : "complete", summary.toMap());
  }
}
