package dev.once.terraform.check;

import com.fasterxml.jackson.databind.JsonNode;
import dev.once.terraform.check.Monitoring.LabelMatch;
import dev.once.terraform.check.Monitoring.MetricRef;
import dev.once.terraform.check.Monitoring.QueryText;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import java.util.regex.Pattern;

/**
 * The alerts an operator needs are there and can be acted on: at least {@link #MINIMUM} policies whatever the
 * variables; among them one on failed outcomes, one on the age of the oldest unacked event of the trigger
 * subscriptions, one on the dead-letter subscription's depth, and for a month-end burst one on the oldest queued
 * document's wait, one on the oldest running batch job and one on the documents given up, and one each on a model
 * Google no longer serves and on a model it answers with another; every policy has a runbook (documentation.content);
 * every PromQL condition has disable_metric_validation = true (an alert on a log-based metric created in the same
 * apply fails with 404 until the metric propagates); and no alert counts the outcomes that are not pipeline events
 * ({@link #NOISE}).
 */
public final class AlertCheck implements Check {
  public static final int MINIMUM = 10;
  /** Outcomes no alert may count: they say nothing about the pipeline's health. */
  public static final Map<String, String> NOISE = Map.of(
      "unauthenticated",
      "requests to the public webhook refused before authentication: anyone on the internet can make them",
      "relisted", "the reconciler listing a job it completed before: not a platform redelivery");

  private static final String OUTCOMES = "outcomes";

  @Override
  public List<Finding> findings(TerraformConfig config) {
    List<Finding> findings = new ArrayList<>();
    List<Block> policies = config.resources("google_monitoring_alert_policy");
    int always = 0;
    List<QueryText> queries = new ArrayList<>();
    for (Block policy : policies) {
      if (!Monitoring.conditional(policy)) {
        always += Monitoring.instanceKeys(config, policy).size();
      }
      JsonNode content = TerraformConfig.asList(policy.body().path("documentation")).stream().findFirst()
          .map(d -> d.path("content")).orElse(null);
      if (content == null || content.asText().isBlank()) {
        findings.add(new Finding(policy.file(), policy.address(), "has no runbook: documentation.content is empty.",
            "add a documentation block saying what the alert means and what to do, step by step."));
      }
      for (JsonNode condition : TerraformConfig.asList(policy.body().path("conditions"))) {
        for (JsonNode promql : TerraformConfig.asList(condition.path("condition_prometheus_query_language"))) {
          if (!promql.path("disable_metric_validation").asBoolean(false)) {
            findings.add(new Finding(policy.file(), policy.address(), "validates its metric when created: on a fresh"
                + " project the log-based metric created in the same apply (or a new subscription's metric) does not exist yet, and the apply fails with 404.",
                "set disable_metric_validation = true in condition_prometheus_query_language."));
          }
        }
        if (condition.has("condition_threshold") || condition.has("condition_monitoring_query_language")) {
          findings.add(new Finding(policy.file(), policy.address(),
              "uses a condition other than PromQL, which this check cannot read.",
              "write it as condition_prometheus_query_language."));
        }
      }
      queries.addAll(Monitoring.alertQueries(config, policy));
    }
    String where = policies.isEmpty() ? "observability.tf" : policies.get(0).file();
    if (always < MINIMUM) {
      findings.add(new Finding(where, "google_monitoring_alert_policy", "only " + always
          + " alert policies exist whatever the variables; at least " + MINIMUM
          + " are needed (duplicate and rejected shares, failed outcomes, trigger backlog, dead letters, the oldest queued document, the oldest batch job, documents given up, a model Google no longer serves, a model Google answers with another).",
          "add the missing alerts."));
    }
    require(queries, ref -> ref.logMetric() && ref.name().equals("gemini_model_unavailable"), where,
        "no alert fires when Google stops serving GEMINI_MODEL: every document would wait, redelivered, in silence.",
        "add an alert on ${local.promql_prefix}gemini_model_unavailable (the \"gemini model unavailable\" line).",
        findings);
    require(queries, ref -> ref.logMetric() && ref.name().equals(OUTCOMES) && matchesOnly(ref, "failed"), where,
        "no alert fires on failed outcomes: a revoked Gemini key would fail every document for a day in silence.",
        "add an alert on ${local.promql_prefix}outcomes{outcome=\"failed\"}.", findings);
    require(queries, ref -> ref.name().equals("pubsub_googleapis_com:subscription_oldest_unacked_message_age")
        && ref.matchers().containsKey("subscription_id"), where,
        "no alert watches the oldest unacked event of the trigger subscriptions: events retried for hours page no one.",
        "add an alert on pubsub_googleapis_com:subscription_oldest_unacked_message_age of the trigger subscriptions.",
        findings);
    require(queries, ref -> ref.name().equals("pubsub_googleapis_com:subscription_num_undelivered_messages")
        && ref.matchers().containsKey("subscription_id"), where,
        "no alert watches the dead-letter subscription: dead letters would wait unseen until they expire.",
        "add an alert on pubsub_googleapis_com:subscription_num_undelivered_messages of the dead-letter subscription.",
        findings);
    require(queries, ref -> ref.logMetric() && ref.name().startsWith("batch_oldest_queued_seconds"), where,
        "no alert watches the oldest queued document's wait: a full cap on jobs in flight or a failing reconciler holds"
            + " a month-end burst in the queue in silence.",
        "add an alert on ${local.promql_prefix}batch_oldest_queued_seconds (the reconciler's gauge).", findings);
    require(queries, ref -> ref.logMetric() && ref.name().startsWith("batch_oldest_job_seconds"), where,
        "no alert watches the oldest running batch job: a job far past Google's 24-hour target holds a place among the"
            + " jobs in flight unseen.",
        "add an alert on ${local.promql_prefix}batch_oldest_job_seconds (the reconciler's gauge).", findings);
    require(queries, ref -> ref.logMetric() && ref.name().startsWith("documents_given_up"), where,
        "no alert watches the documents given up: a batch job that fails or expires fails its documents in silence.",
        "add an alert on the share ${local.promql_prefix}documents_given_up / documents_finished.", findings);
    for (QueryText query : queries) {
      for (MetricRef ref : Monitoring.metricsIn(query.text())) {
        if (ref.logMetric() && ref.name().equals(OUTCOMES)) {
          for (var noise : NOISE.entrySet()) {
            if (counts(ref.matchers().get("outcome"), noise.getKey())) {
              findings.add(new Finding(query.file(), query.where(), "counts " + noise.getKey() + " outcomes ("
                  + noise.getValue() + ").",
                  "match outcome=\"…\" exactly, or exclude it: outcome!~\"" + String.join("|", NOISE.keySet())
                      + "\"."));
            }
          }
        }
      }
    }
    return findings;
  }

  private static boolean matchesOnly(MetricRef ref, String outcome) {
    LabelMatch match = ref.matchers().get("outcome");
    return match != null && match.op().equals("=") && outcome.equals(match.value());
  }

  /** Whether a selector with this outcome matcher (null: none) includes the outcome. */
  static boolean counts(LabelMatch match, String outcome) {
    if (match == null || match.value() == null) {
      return match == null;
    }
    boolean hit = switch (match.op()) {
      case "=", "!=" -> match.value().equals(outcome);
      default -> Pattern.compile(match.value()).matcher(outcome).matches();
    };
    return match.op().startsWith("!") != hit;
  }

  private static void require(List<QueryText> queries, Predicate<MetricRef> wanted, String where, String problem,
      String fix, List<Finding> findings) {
    boolean present = queries.stream().anyMatch(q -> Monitoring.metricsIn(q.text()).stream().anyMatch(wanted));
    if (!present) {
      findings.add(new Finding(where, "google_monitoring_alert_policy", problem, fix));
    }
  }
}
