package dev.once.bench;

import java.time.Duration;

/**
 * Google's list prices the burst's infrastructure is priced at, in US dollars, as published on the pages named here
 * (read 2026-12-01; before any free tier or discount, which a month-end burst exceeds or which the bill applies).
 *
 * <ul>
 *   <li>Firestore, Standard edition (https://cloud.google.com/firestore/pricing, "Reads, writes, and deletes"):
 *       $0.06 per 100,000 document reads, $0.18 per 100,000 writes, $0.02 per 100,000 deletes, the multi-region
 *       (nam5, eur3) rates; a regional database (terraform's default, firestore_location = region) is billed less,
 *       by the page's location table, so these are the upper bound. TTL deletes are billed as deletes.</li>
 *   <li>Cloud Run functions (gen2 functions are Cloud Run services: https://cloud.google.com/run/pricing, "Pricing
 *       for services with CPU only allocated during request processing", Tier 1, which europe-west1 is):
 *       $0.00002400 per vCPU-second, $0.00000250 per GiB-second, $0.40 per million requests; instance time rounded
 *       up to the nearest 100 ms, and requests served at once by one instance share its time.</li>
 *   <li>Pub/Sub (https://cloud.google.com/pubsub/pricing, read 2026-12-06 through its transcription of 2026-09-20):
 *       message delivery basic, $40 per TiB of throughput, publishes and deliveries each billed at least 1,000 bytes
 *       a request.</li>
 * </ul>
 */
final class ListPrices {
  static final double FIRESTORE_READ = 0.06 / 100_000;
  static final double FIRESTORE_WRITE = 0.18 / 100_000;
  static final double FIRESTORE_DELETE = 0.02 / 100_000;
  static final double VCPU_SECOND = 0.000024;
  static final double GIB_SECOND = 0.0000025;
  static final double REQUEST = 0.40 / 1_000_000;
  static final Duration GRANULE = Duration.ofMillis(100);
  static final double PUBSUB_BYTE = 40.0 / (1L << 40);
  static final long PUBSUB_MIN_BYTES = 1_000;

  private ListPrices() {}

  /** A function as terraform/functions.tf sizes it (FunctionSizesTest keeps these in step). */
  enum Function {
    DOCUMENT_UPLOADED("DocumentUploaded", 1, 2, 4),
    MESSAGE_DELIVERED("MessageDelivered", 1, 1, 16),
    GEMINI_WEBHOOK("GeminiWebhook", 1, 1, 32),
    BATCH_COMPLETED("BatchCompleted", 1, 2, 4),
    GEMINI_RECONCILER("GeminiReconciler", 1, 1, 1);

    final String title;
    final double vcpu;
    final double gib;
    final int concurrency;

    Function(String title, double vcpu, double gib, int concurrency) {
      this.title = title;
      this.vcpu = vcpu;
      this.gib = gib;
      this.concurrency = concurrency;
    }

    /** USD of one second of an instance of this size. */
    double perSecond() {
      return vcpu * VCPU_SECOND + gib * GIB_SECOND;
    }
  }

  /** USD of one Pub/Sub publish or delivery of a message of {@code bytes}. */
  static double pubsub(long bytes) {
    return Math.max(bytes, PUBSUB_MIN_BYTES) * PUBSUB_BYTE;
  }

  /** USD of these documents read, written and deleted (now, and later by TTL). */
  static double firestore(FirestoreCalls.Billed billed) {
    return billed.reads() * FIRESTORE_READ + billed.writes() * FIRESTORE_WRITE
        + (billed.deletes() + billed.expiring()) * FIRESTORE_DELETE;
  }
}
