package dev.once.run.demo;

import com.fasterxml.jackson.databind.JsonNode;
import dev.once.budget.DaySpend;
import dev.once.gemini.GeminiCompletionKeys;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.LedgerRecord;
import dev.once.ledger.RecordState;
import dev.once.pipeline.Effects;
import dev.once.run.Mode;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Reads the ledger for the demo's keys and builds the report: the rows, and the problems that fail the demo.
 *
 * @param stored Firestore as the demo reads it (the ledger, analyses and billing by key)
 * @param o what the stand-ins and the results topic showed at the end
 * @param geminiBefore the Gemini stand-in's counters before the demo
 * @param reconcilerVisits job key's hash ({@link IdempotencyKey#logHash}) → the reconciler's log lines for it
 * @param timeouts waits that ran out (something was lost or stuck)
 */
record Evaluation(StoredState stored, Mode mode, List<Upload> uploads, Observation o, JsonNode geminiBefore,
    Map<String, Integer> reconcilerVisits, String folder, List<String> duplicatesSent, JsonNode reconciled,
    List<String> timeouts) {

  DemoReport report() {
    List<String> problems = new ArrayList<>(timeouts);
    List<DemoReport.Row> rows = new ArrayList<>();
    List<String> notes = new ArrayList<>();
    List<IdempotencyKey> docs = uploads.stream().map(Upload::key).toList();
    List<String> finalizeIds = uploads.stream().flatMap(u -> o.finalizeIdsOf(u).stream()).toList();
    List<String> messageIds = uploads.stream().flatMap(u -> o.messageIdsOf(u).stream()).toList();
    int finalizeDeliveries = o.endedDeliveries(finalizeIds);
    if (o.gaveUpOn(finalizeIds) || o.gaveUpOn(messageIds)) {
      problems.add("lost: the relay gave up delivering an event of the demo (see the relay's log)");
    }

    if (mode == Mode.SYNC) {
      Tally analyse = tally(docs, Effects.ANALYSE, problems);
      long calls = geminiDelta("generateContent");
      int billed = billed(docs, problems);
      rows.add(new DemoReport.Row(Effects.ANALYSE, finalizeDeliveries, analyse.done(), analyse.rejected(),
          calls + " Gemini generateContent calls, " + billed + " billing entries"));
      if (calls > analyse.done()) {
        problems.add("ran twice: Gemini generateContent was called " + calls + " times for " + analyse.done()
            + " analyses");
      }
      if (billed != analyse.done()) {
        problems.add(billed + " billing entries for " + analyse.done() + " analyses");
      }
      Tally publish = tally(docs, Effects.PUBLISH, problems);
      rows.add(new DemoReport.Row(Effects.PUBLISH, finalizeDeliveries, publish.done(), publish.rejected(),
          published(problems)));
    } else {
      // In batch mode the analyse effect submits the document's batch job; its completion records the analysis.
      Tally submit = tally(docs, Effects.ANALYSE, problems);
      long creates = geminiDelta("batchGenerateContent");
      if (creates > submit.done()) {
        problems.add("ran twice: " + creates + " batch jobs created for " + submit.done() + " submissions");
      }
      Set<IdempotencyKey> jobs = new LinkedHashSet<>();
      int webhookDeliveries = 0;
      int inJobs = 0;
      List<IdempotencyKey> refused = new ArrayList<>();
      for (Upload upload : uploads) {
        Optional<Observation.Analysis> analysis = o.analysisOf(upload);
        String job = analysis.map(Observation.Analysis::job).orElse(null);
        inJobs += job == null ? 0 : 1;
        if (job != null && jobs.add(GeminiCompletionKeys.ofName(job))) {
          webhookDeliveries += o.webhooks().getOrDefault(job, 0);
        }
        if (stored.record(upload.key(), Effects.ANALYSE).map(r -> r.state() == RecordState.REJECTED)
            .orElse(false)) {
          refused.add(upload.key());
        }
      }
      // Documents are gathered into jobs of several: the row says how many shared how many jobs.
      rows.add(new DemoReport.Row(Effects.ANALYSE, finalizeDeliveries, submit.done(), submit.rejected(),
          creates + " Gemini batch jobs created, " + inJobs + " documents in them"));
      if (creates > jobs.size()) {
        problems.add("ran twice: " + creates + " batch jobs created for the " + jobs.size() + " jobs documents name");
      }
      int reconciled = jobs.stream().mapToInt(j -> reconcilerVisits.getOrDefault(j.logHash(), 0)).sum();
      Tally complete = tally(List.copyOf(jobs), Effects.COMPLETE, problems);
      int billed = billed(docs, problems);
      long gets = geminiDelta("batches.get");
      rows.add(new DemoReport.Row(Effects.COMPLETE, webhookDeliveries + reconciled, complete.done(),
          complete.rejected(), webhookDeliveries + " webhooks + " + reconciled + " reconciler visits; " + billed
              + " billing entries, " + gets + " Gemini batches.get calls"));
      List<IdempotencyKey> publishKeys = new ArrayList<>(jobs);
      publishKeys.addAll(refused);
      List<String> refusedIds = uploads.stream().filter(u -> refused.contains(u.key()))
          .flatMap(u -> o.finalizeIdsOf(u).stream()).toList();
      Tally publish = tally(publishKeys, Effects.PUBLISH, problems);
      rows.add(new DemoReport.Row(Effects.PUBLISH, webhookDeliveries + reconciled + o.endedDeliveries(refusedIds),
          publish.done(), publish.rejected(), published(problems) + " (per job; refused documents at once)"));
    }
    Tally notify = tally(docs, Effects.NOTIFY, problems);
    int notifications = uploads.stream().mapToInt(o::notifiedOf).sum();
    int mostPerKey = uploads.stream().mapToInt(o::notifiedOf).max().orElse(0);
    rows.add(new DemoReport.Row(Effects.NOTIFY, o.endedDeliveries(messageIds), notify.done(), notify.rejected(),
        notifications + " notifications answered 2xx, at most " + mostPerKey + " per Idempotency-Key"));

    List<String> documents = new ArrayList<>();
    for (Upload upload : uploads) {
      Optional<Observation.Analysis> analysis = o.analysisOf(upload);
      String status = analysis.map(Observation.Analysis::status).orElse("no analysis");
      String reason = analysis.map(Observation.Analysis::reason).filter(r -> r != null && !r.isBlank())
          .map(r -> ": " + (r.length() > 90 ? r.substring(0, 89) + "…" : r)).orElse("");
      documents.add(String.format("%-12s %-16s → %s%s", upload.sample().fileName(), upload.sample().contentType(),
          status, status.equals("analysed") ? "" : reason));
      if (!Observation.FINAL.contains(status)) {
        problems.add("lost: " + upload.name() + " has no final analysis (" + status + ")");
      }
      int notified = o.notifiedOf(upload);
      if (notified == 0) {
        problems.add("lost: " + upload.name() + " was never notified");
      } else if (notified > 1) {
        problems.add("ran twice: " + upload.name() + " was notified " + notified + " times with Idempotency-Key "
            + upload.key());
      }
      int analyses = stored.analyses(upload.key());
      if (analyses > 1) {
        problems.add("ran twice: " + analyses + " analyses for " + upload.key());
      }
    }
    for (DemoReport.Row row : rows) {
      if (row.absorbed() < 0) {
        problems.add(row.effect() + " was performed or refused more often than it was asked for");
      }
    }
    // A demo whose duplicates never arrived would prove nothing.
    for (DemoReport.Row row : rows) {
      boolean expectsDuplicates = row.effect().equals(Effects.NOTIFY) || row.effect().equals(Effects.ANALYSE)
          || row.effect().equals(Effects.COMPLETE);
      if (expectsDuplicates && row.absorbed() < 1 && timeouts.isEmpty()) {
        problems.add("no duplicate delivery asked for " + row.effect() + ": the demo's duplicates did not arrive");
      }
    }
    if (reconciled != null) {
      List<String> counts = new ArrayList<>();
      reconciled.fields().forEachRemaining(f -> {
        if (f.getValue().isNumber() && f.getValue().asLong() != 0 && !f.getKey().equals("pages")) {
          counts.add(f.getKey() + " " + f.getValue().asLong());
        }
      });
      notes.add("reconciler run: " + (reconciled.path("seen").asLong() == 0 ? "no batch jobs to look at"
          : String.join(", ", counts) + " (every job the Gemini stand-in holds, not only this demo's)"));
    }
    notes.add(spend(docs));
    return new DemoReport(mode, folder, documents, duplicatesSent, rows, notes, problems);
  }

  /** What this demo's analyses cost, and the day's spend as the budget's counters hold it. */
  private String spend(List<IdempotencyKey> docs) {
    long demo = docs.stream().mapToLong(stored::costMicroUsd).sum();
    DaySpend today = stored.spendToday();
    return "Gemini spend: this demo's analyses " + demo + " µUSD (billing); " + today.day() + ": "
        + (today.totalMicroUsd() == 0 ? "nothing counted (no GEMINI_DAILY_BUDGET_USD, or nothing spent yet)"
            : today.spentMicroUsd() + " µUSD spent, " + today.reservedMicroUsd() + " reserved (the budget's counters)");
  }

  private long geminiDelta(String counter) {
    return o.gemini(counter) - geminiBefore.path(counter).asLong();
  }

  /** Billing entries of the documents, each found by its key field; more than one for a key is a problem. */
  private int billed(List<IdempotencyKey> keys, List<String> problems) {
    int total = 0;
    for (IdempotencyKey key : keys) {
      int entries = stored.billingEntries(key);
      if (entries > 1) {
        problems.add("ran twice: " + key + " was billed " + entries + " times");
      }
      total += entries;
    }
    return total;
  }

  /** Results on the topic for the demo's documents; none or two for a key is a problem. */
  private String published(List<String> problems) {
    int total = 0;
    int most = 0;
    for (Upload upload : uploads) {
      int messages = o.messageIdsOf(upload).size();
      total += messages;
      most = Math.max(most, messages);
      if (messages == 0) {
        problems.add("lost: no result was published for " + upload.name());
      } else if (messages > 1) {
        problems.add("ran twice: " + messages + " results were published for " + upload.key());
      }
    }
    return total + " results on the topic, at most " + most + " per document";
  }

  private record Tally(int done, int rejected) {}

  private Tally tally(Collection<IdempotencyKey> keys, String effect, List<String> problems) {
    int done = 0;
    int rejected = 0;
    for (IdempotencyKey key : keys) {
      Optional<LedgerRecord> record = stored.record(key, effect);
      if (record.isEmpty()) {
        continue;
      }
      switch (record.get().state()) {
        case DONE -> done++;
        case REJECTED -> rejected++;
        case CLAIMED -> problems.add(effect + " of " + key + " is still claimed (" + record.get().attempts()
            + " attempts, last error: " + record.get().error() + ")");
      }
    }
    return new Tally(done, rejected);
  }
}
