package dev.once.functions;

import dev.once.config.OnceSetting;
import com.google.cloud.functions.HttpFunction;
import com.google.cloud.functions.HttpRequest;
import com.google.cloud.functions.HttpResponse;
import dev.once.config.MissingSetting;
import dev.once.observe.Log;
import java.io.IOException;
import java.time.Duration;
import java.time.InstantSource;
import java.util.Map;

/**
 * Entry point for Cloud Scheduler (HTTP, private: the scheduler calls it with an OIDC token). Runs one bounded
 * reconciliation (see ReconcileFlow) and answers its summary: seen, processed, duplicate, in flight, pending,
 * rejected, failed.
 */
public final class GeminiReconciler implements HttpFunction {
  static final String NAME = "GeminiReconciler";
  /** 50 jobs a page, 20 pages, 2 minutes (checked before each job): well inside the function's timeout. */
  static final int PAGE_SIZE = 50;
  static final int MAX_PAGES = 20;
  static final Duration BUDGET = Duration.ofMinutes(2);
  /** Waiting documents whose jobs a run looks up when the listing did not show them (a random slice, see Records). */
  static final int PENDING_PER_RUN = 100;

  private static final Lazy<ReconcileFlow> FLOW = Lazy.of(() -> wire(Clients.instance()));

  static ReconcileFlow wire(Clients clients) {
    // A day short of the ledger's retention: older jobs may have lost their records (see ReconcileFlow).
    Duration maxAge = clients.settings.days(OnceSetting.ONCE_RETENTION_DAYS).minus(Duration.ofDays(1));
    return new ReconcileFlow(clients.batchJobs, clients.records, GeminiWebhook.wire(clients),
        new ReconcileFlow.Limits(PAGE_SIZE, MAX_PAGES, BUDGET, maxAge.isNegative() ? Duration.ZERO : maxAge,
            PENDING_PER_RUN),
        InstantSource.system());
  }

  @Override
  public void service(HttpRequest request, HttpResponse response) throws IOException {
    if (!"POST".equals(request.getMethod()) && !"GET".equals(request.getMethod())) {
      response.appendHeader("Allow", "POST, GET");
      HttpAnswer.send(response, 405, "method_not_allowed");
      return;
    }
    ReconcileFlow.Summary summary;
    try {
      summary = FLOW.get().run();
    } catch (MissingSetting e) {
      Log.error("the reconciler is misconfigured: " + e.getMessage(), Map.of("function", NAME));
      HttpAnswer.send(response, 500, "misconfigured");
      return;
    } catch (RuntimeException e) {
      Log.error("the reconciler could not list batch jobs", Map.of("function", NAME, "error", String.valueOf(e)));
      HttpAnswer.send(response, 503, "unavailable");
      return;
    }
    Log.info("reconciliation run", Map.of("function", NAME, "summary", summary.toMap()));
    HttpAnswer.send(response, 200, summary.truncated ? "partial" : "complete", summary.toMap());
  }
}
