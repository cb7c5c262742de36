package dev.once.bench;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * What a burst costs beyond Gemini, per document, at {@link ListPrices}: for each function, the Firestore documents
 * its calls read, wrote and deleted (counted on its channel, {@link FirestoreCalls.Billed}), its invocations, and the
 * instance time they are billed. A per-document function's instances are full in a burst (it serves up to its
 * {@code max_instance_request_concurrency} at once and is billed once for the time they share); a per-job one serves
 * its calls alone. Every call is billed at least {@link ListPrices#GRANULE}.
 */
final class BurstCost {
  /** One function's share of the burst. */
  record Part(ListPrices.Function function, String what, FirestoreCalls.Billed documents, long invocations,
      List<Long> callMillis, boolean shared) {
    /** Instance seconds billed: each call at least the granule, shared by a full instance's requests. */
    double billedSeconds(boolean sharing) {
      double seconds = callMillis.stream()
          .mapToDouble(ms -> Math.max(ms, ListPrices.GRANULE.toMillis()) / 1000.0).sum();
      return sharing && shared ? seconds / function.concurrency : seconds;
    }

    double firestoreUsd() {
      return ListPrices.firestore(documents);
    }

    double functionsUsd(boolean sharing) {
      return invocations * ListPrices.REQUEST + billedSeconds(sharing) * function.perSecond();
    }
  }

  /** Pub/Sub's share: what its messages carry, and what they cost in all (USD). */
  record Messages(String what, long messages, double usd) {}

  /** Issue 40's targets: per document, and as a share of its Gemini batch cost on the default model. */
  static final double TARGET_MICRO_USD = 12;
  static final double TARGET_SHARE = 0.03;

  private final long documents;
  private final List<Part> parts = new ArrayList<>();
  private final List<Messages> messages = new ArrayList<>();

  BurstCost(long documents) {
    this.documents = documents;
  }

  BurstCost add(Part part) {
    parts.add(part);
    return this;
  }

  BurstCost add(Messages sent) {
    messages.add(sent);
    return this;
  }

  /** µUSD per document: Firestore, Pub/Sub, and the functions with instances full (or each call alone). */
  double perDocumentMicroUsd(boolean sharing) {
    return (parts.stream().mapToDouble(p -> p.firestoreUsd() + p.functionsUsd(sharing)).sum() + pubsubUsd()) * 1e6
        / documents;
  }

  private double pubsubUsd() {
    return messages.stream().mapToDouble(Messages::usd).sum();
  }

  double firestorePerDocumentMicroUsd() {
    return parts.stream().mapToDouble(Part::firestoreUsd).sum() * 1e6 / documents;
  }

  void print(PrintStream out, double geminiMicroUsdPerDocument) {
    out.printf("%nbeyond Gemini, per document of the burst (list prices: ListPrices; a burst of %d an hour)%n",
        documents);
    out.printf("  %-44s %7s %7s %7s %7s %7s %9s %8s %8s%n", "function: what", "reads", "writes", "deletes", "TTL del",
        "calls", "billed s", "µUSD FS", "µUSD fn");
    for (Part p : parts) {
      out.printf("  %-44s %7.2f %7.2f %7.2f %7.2f %7.3f %9.4f %8.2f %8.2f%n",
          p.function().title + ": " + p.what(), per(p.documents().reads()), per(p.documents().writes()),
          per(p.documents().deletes()), per(p.documents().expiring()), per(p.invocations()),
          p.billedSeconds(true) / documents, p.firestoreUsd() * 1e6 / documents,
          p.functionsUsd(true) * 1e6 / documents);
    }
    for (Messages m : messages) {
      out.printf("  %-44s %47.3f %26.2f%n", "Pub/Sub: " + m.what(), per(m.messages()), m.usd() * 1e6 / documents);
    }
    double burst = perDocumentMicroUsd(true);
    double alone = perDocumentMicroUsd(false);
    double firestore = firestorePerDocumentMicroUsd();
    double pubsub = pubsubUsd() * 1e6 / documents;
    out.printf("  %-44s %75.2f µUSD (Firestore %.2f, Pub/Sub %.2f, functions %.2f)%n", "total", burst, firestore,
        pubsub, burst - firestore - pubsub);
    boolean met = burst <= TARGET_MICRO_USD && burst <= TARGET_SHARE * geminiMicroUsdPerDocument;
    out.printf("%-52s %.1f µUSD batch; infrastructure %.2f µUSD = %.1f %% of it (target ≤ %.0f µUSD and ≤ %.0f %%:"
        + " %s)%n", "Gemini cost per document", geminiMicroUsdPerDocument, burst,
        100 * burst / geminiMicroUsdPerDocument,
        TARGET_MICRO_USD, 100 * TARGET_SHARE, met ? "met" : "NOT met");
    out.printf("%-52s %.2f µUSD = %.1f %% (every call billed alone, as a trickle is)%n",
        "  with no instance shared", alone, 100 * alone / geminiMicroUsdPerDocument);
    Part largest = parts.stream().max(Comparator.comparingDouble(p -> p.firestoreUsd() + p.functionsUsd(true)))
        .orElseThrow();
    out.printf("%-52s %s: %s (%.2f µUSD a document)%n", "  the largest share", largest.function().title,
        largest.what(), (largest.firestoreUsd() + largest.functionsUsd(true)) * 1e6 / documents);
  }

  private double per(long n) {
    return (double) n / documents;
  }
}
