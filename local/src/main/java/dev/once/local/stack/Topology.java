package dev.once.local.stack;

/**
 * Names in the local project: the topics Terraform creates, the relay's subscription (Eventarc's, in the cloud),
 * and the taps the demo reads from. Ids, as the functions accept them.
 */
public final class Topology {
  public static final String BUCKET = "inbox";
  public static final String RESULTS_TOPIC = "results";
  public static final String DEAD_LETTER_TOPIC = "dead-letter";
  /** The webhook hands finished batch jobs to BatchCompleted through this one. */
  public static final String BATCH_COMPLETIONS_TOPIC = "batch-completions";
  /** The relay pulls this one and delivers to MessageDelivered, as Eventarc's trigger subscription does. */
  public static final String DELIVERED_SUBSCRIPTION = "delivered";
  /** The relay pulls this one and delivers to BatchCompleted, as Eventarc's trigger subscription does. */
  public static final String COMPLETED_SUBSCRIPTION = "completed";
  /** Every published result, for the demo's count of messages per key. */
  public static final String RESULTS_TAP = "results-tap";
  /** Keeps dead letters, as Terraform's {@code …-dead-letter-hold} does. */
  public static final String DEAD_LETTER_HOLD = "dead-letter-hold";
  /** The path of NOTIFY_URL on the notification endpoint. */
  public static final String NOTIFY_PATH = "/notify";

  private Topology() {}

  public static String topic(String project, String id) {
    return "projects/" + project + "/topics/" + id;
  }

  public static String subscription(String project, String id) {
    return "projects/" + project + "/subscriptions/" + id;
  }
}
