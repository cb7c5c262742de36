package dev.once.run.demo;

import dev.once.local.stack.Topology;
import dev.once.run.Mode;
import java.util.ArrayList;
import java.util.List;

/**
 * What the demo found, per effect: how many deliveries asked for it, how many times it was performed, how many of
 * the deliveries were duplicates it absorbed, and how many were refused; and the problems that fail the demo (an
 * effect that ran twice, an event that was lost).
 */
public record DemoReport(Mode mode, String folder, List<String> documents, List<String> duplicatesSent,
    List<Row> rows, List<String> notes, List<String> problems) {

  /**
   * One effect.
   *
   * @param deliveries deliveries of the events that ask for this effect (from the senders: relay, Gemini stand-in,
   *     and the reconciler's own log lines)
   * @param performed ledger records DONE
   * @param rejected ledger records REJECTED (refused for good, recorded once)
   * @param evidence what the stand-ins, Firestore and the topic show that this effect did
   */
  public record Row(String effect, int deliveries, int performed, int rejected, String evidence) {
    public int absorbed() {
      return deliveries - performed - rejected;
    }
  }

  public boolean ok() {
    return problems.isEmpty();
  }

  public List<String> render() {
    List<String> lines = new ArrayList<>();
    lines.add("demo, " + mode.value() + " mode: " + documents.size() + " documents uploaded to gs://"
        + Topology.BUCKET + "/" + folder);
    documents.forEach(d -> lines.add("  " + d));
    lines.add("  duplicates sent: " + String.join("; ", duplicatesSent));
    lines.add("");
    lines.add(String.format("  %-13s %10s %10s %20s %9s   %s", "effect", "deliveries", "performed",
        "duplicates absorbed", "rejected", "evidence"));
    for (Row row : rows) {
      lines.add(String.format("  %-13s %10d %10d %20d %9d   %s", row.effect(), row.deliveries(), row.performed(),
          row.absorbed(), row.rejected(), row.evidence()));
    }
    notes.forEach(n -> lines.add("  " + n));
    lines.add("");
    if (ok()) {
      int absorbed = rows.stream().mapToInt(Row::absorbed).sum();
      lines.add("  verdict: OK — no effect ran twice and no event was lost; " + absorbed
          + " duplicate deliveries absorbed");
    } else {
      lines.add("  verdict: FAILED");
      problems.forEach(p -> lines.add("    - " + p));
    }
    return lines;
  }
}
