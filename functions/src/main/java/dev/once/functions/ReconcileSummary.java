package dev.once.functions;

import java.util.LinkedHashMap;
import java.util.Map;

/** What a reconciliation run saw and did ({@link ReconcileFlow}); the HTTP answer. */
final class ReconcileSummary {
  int seen;
  int processed;
  /** Jobs completed before (by the webhook, or an earlier run): the poller's own repeats, not redeliveries. */
  int relisted;
  /** Stray second jobs cancelled while they ran. */
  int cancelled;
  int inFlight;
  int pending;
  int rejected;
  int failed;
  int tooOld;
  int pendingChecked;
  int pages;
  /** Deferred documents that went on (analysed, submitted, or refused) because budget was available again. */
  int deferredResumed;
  /** Batch jobs gathered from queued documents and submitted, and gatherings whose interrupted submission resumed. */
  int jobsSubmitted;
  int gatheringsResumed;
  boolean truncated;

  Map<String, Object> toMap() {
    Map<String, Object> map = new LinkedHashMap<>();
    map.put("seen", seen);
    map.put("processed", processed);
    map.put("relisted", relisted);
    map.put("cancelled", cancelled);
    map.put("in_flight", inFlight);
    map.put("pending", pending);
    map.put("rejected", rejected);
    map.put("failed", failed);
    map.put("too_old", tooOld);
    map.put("pending_checked", pendingChecked);
    map.put("pages", pages);
    map.put("deferred_resumed", deferredResumed);
    map.put("jobs_submitted", jobsSubmitted);
    map.put("gatherings_resumed", gatheringsResumed);
    map.put("truncated", truncated);
    return map;
  }
}
