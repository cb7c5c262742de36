package dev.once.terraform.check;

import com.github.javaparser.ast.expr.StringLiteralExpr;
import com.github.javaparser.ast.expr.TextBlockLiteralExpr;
import dev.once.observe.OutcomeLabel;
import dev.once.terraform.check.Monitoring.LabelMatch;
import dev.once.terraform.check.Monitoring.LogMetric;
import dev.once.terraform.check.Monitoring.MetricRef;
import dev.once.terraform.check.Monitoring.QueryText;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The alerts and the dashboard name only metrics that exist and labels that are there: every
 * {@code ${local.promql_prefix}KEY} is a google_logging_metric of this configuration (its {@code _bucket},
 * {@code _sum} and {@code _count} series when it is a distribution), every other metric one of the platform's listed
 * below; every label matched or grouped by is one the metric extracts or its monitored resource has; and every log
 * field, label and label value the metrics filter on or extract, and the queries match, is one the code writes (a
 * string of its sources). The new parts of the log contract that the code does not write yet are listed in
 * {@link #PENDING_LOG_CONTRACT}, which must shrink as the code catches up.
 */
public final class MonitoringQueryCheck implements Check {
  /** Google's metrics the queries may use, with their labels (resource labels included). */
  static final Map<String, Set<String>> PLATFORM_METRICS = Map.of(
      "pubsub_googleapis_com:subscription_oldest_unacked_message_age",
      Set.of("subscription_id", "project_id", "monitored_resource"),
      "pubsub_googleapis_com:subscription_num_undelivered_messages",
      Set.of("subscription_id", "project_id", "monitored_resource"));
  /** Labels of the cloud_run_revision resource the log-based metrics are written against, and PromQL's own. */
  static final Set<String> RESOURCE_LABELS = Set.of("monitored_resource", "project_id", "service_name", "revision_name",
      "location", "configuration_name");
  /** Labels whose values the code writes, so a matcher's value must be one of its strings. */
  static final Set<String> VALUE_LABELS = Set.of("outcome", "effect", "function");

  /**
   * Names of the log contract the metrics rely on while the code does not write them yet. Once the code writes one,
   * this check fails until it is deleted from here. Empty: the spending guard's names (issue 14) are written now.
   */
  public static final Map<String, String> PENDING_LOG_CONTRACT = Map.of();

  private static final Pattern LABEL_FIELD = Pattern.compile("(?<![.\\w])labels\\.(\"?)([A-Za-z_][A-Za-z0-9_]*)\\1");
  private static final Pattern LABEL_VALUE =
      Pattern.compile("(?<![.\\w])labels\\.(\"?)([A-Za-z_][A-Za-z0-9_]*)\\1\\s*=\\s*\"([^\"]*)\"");
  private static final Pattern PAYLOAD_FIELD = Pattern.compile("\\bjsonPayload\\.([A-Za-z_][A-Za-z0-9_.]*)");
  private static final Pattern PAYLOAD_VALUE = Pattern.compile("\\bjsonPayload\\.message\\s*=\\s*\"([^\"]*)\"");
  private static final Pattern PLAIN_ALTERNATIVES = Pattern.compile("[a-z_-]+(\\|[a-z_-]+)*");

  private final Set<String> codeStrings;
  private final Map<String, String> pending;

  public MonitoringQueryCheck(Set<String> codeStrings, Map<String, String> pending) {
    this.codeStrings = Set.copyOf(codeStrings);
    this.pending = Map.copyOf(pending);
  }

  /** Against the strings of every module that runs against Google. */
  public static MonitoringQueryCheck forCode(Path root) {
    return new MonitoringQueryCheck(strings(JavaSources.of(root)), PENDING_LOG_CONTRACT);
  }

  /** The strings of the sources, and the outcome labels (an enum, logged by its lower-case name). */
  static Set<String> strings(JavaSources java) {
    Set<String> strings = new HashSet<>();
    for (OutcomeLabel label : OutcomeLabel.values()) {
      strings.add(label.label());
    }
    for (JavaSources.Source source : java.sources()) {
      source.unit().findAll(StringLiteralExpr.class).forEach(s -> strings.add(s.asString()));
      source.unit().findAll(TextBlockLiteralExpr.class).forEach(s -> strings.add(s.asString()));
    }
    return strings;
  }

  @Override
  public List<Finding> findings(TerraformConfig config) {
    List<Finding> findings = new ArrayList<>();
    for (String name : pending.keySet()) {
      if (codeStrings.contains(name)) {
        findings.add(new Finding("MonitoringQueryCheck.java", "PENDING_LOG_CONTRACT", "\"" + name
            + "\" is written by the code now, so it is no longer pending.",
            "delete it from MonitoringQueryCheck.PENDING_LOG_CONTRACT."));
      }
    }
    for (Block misnamed : Monitoring.misnamedMetrics(config)) {
      findings.add(new Finding(misnamed.file(), misnamed.address(),
          "is not named \"${local.metric_prefix}_KEY\", so no query can name it through local.promql_prefix.",
          "name it \"${local.metric_prefix}_KEY\" with a literal KEY (or ${each.key})."));
    }
    Map<String, LogMetric> metrics = Monitoring.logMetrics(config);
    for (LogMetric metric : metrics.values()) {
      for (String expression : metric.expressions()) {
        checkLogExpression(metric, expression, findings);
      }
    }
    List<QueryText> queries = new ArrayList<>();
    for (Block policy : config.resources("google_monitoring_alert_policy")) {
      queries.addAll(Monitoring.alertQueries(config, policy));
    }
    for (Block dashboard : config.resources("google_monitoring_dashboard")) {
      queries.addAll(Monitoring.dashboardQueries(config, dashboard));
    }
    for (QueryText query : queries) {
      checkQuery(query, metrics, findings);
    }
    return findings;
  }

  private void checkLogExpression(LogMetric metric, String expression, List<Finding> findings) {
    Set<String> names = new LinkedHashSet<>();
    Matcher label = LABEL_FIELD.matcher(expression);
    while (label.find()) {
      names.add(label.group(2));
    }
    Matcher payload = PAYLOAD_FIELD.matcher(expression);
    while (payload.find()) {
      names.addAll(List.of(payload.group(1).split("\\.")));
    }
    Matcher value = LABEL_VALUE.matcher(expression);
    while (value.find()) {
      names.add(value.group(3));
    }
    Matcher message = PAYLOAD_VALUE.matcher(expression);
    while (message.find()) {
      names.add(message.group(1));
    }
    for (String name : names) {
      if (!written(name)) {
        findings.add(new Finding(metric.block().file(), metric.block().address(), "reads \"" + name
            + "\" from the log lines (" + expression + "), which no line of the code writes.",
            "use a field, label or value the code logs (core/.../observe), or add it to the code first."));
      }
    }
  }

  private void checkQuery(QueryText query, Map<String, LogMetric> metrics, List<Finding> findings) {
    List<MetricRef> refs = Monitoring.metricsIn(query.text());
    Set<String> known = new LinkedHashSet<>(RESOURCE_LABELS);
    for (MetricRef ref : refs) {
      Set<String> labels = labelsOf(ref, metrics);
      if (labels == null) {
        findings.add(new Finding(
            query.file(), query.where(), "names " + (ref.logMetric() ? Monitoring.PROMQL_PREFIX : "")
                + ref.name() + ", which " + (ref.logMetric() ? "no google_logging_metric of this configuration defines"
                    : "is not one of the platform metrics this check knows (MonitoringQueryCheck.PLATFORM_METRICS)")
                + ".",
            ref.logMetric()
                ? "define the metric in observability.tf, or correct the name (a distribution's series end in _bucket, _sum, _count)."
                : "correct the name, or add the metric and its labels to PLATFORM_METRICS after checking Google's metrics list."));
        continue;
      }
      known.addAll(labels);
      for (var matcher : ref.matchers().entrySet()) {
        if (!labels.contains(matcher.getKey()) && !RESOURCE_LABELS.contains(matcher.getKey())) {
          findings.add(new Finding(query.file(), query.where(),
              "matches label " + matcher.getKey() + " of " + ref.name()
                  + ", which that metric does not have (it has " + labels + ").",
              "match a label the metric extracts."));
        }
        checkValue(query, matcher.getKey(), matcher.getValue(), findings);
      }
    }
    for (String label : Monitoring.groupingLabels(query.text())) {
      if (!known.contains(label)) {
        findings.add(new Finding(query.file(), query.where(), "groups by " + label
            + ", which none of the metrics it names has.", "group by a label of those metrics."));
      }
    }
  }

  /** The labels of a named metric (le on a distribution's buckets); null when it does not exist. */
  private static Set<String> labelsOf(MetricRef ref, Map<String, LogMetric> metrics) {
    if (!ref.logMetric()) {
      return PLATFORM_METRICS.get(ref.name());
    }
    if (metrics.containsKey(ref.name())) {
      return metrics.get(ref.name()).labels();
    }
    for (String suffix : List.of("_bucket", "_sum", "_count")) {
      String base = ref.name().endsWith(suffix) ? ref.name().substring(0, ref.name().length() - suffix.length()) : null;
      if (base != null && metrics.containsKey(base) && metrics.get(base).distribution()) {
        Set<String> labels = new LinkedHashSet<>(metrics.get(base).labels());
        if (suffix.equals("_bucket")) {
          labels.add("le");
        }
        return labels;
      }
    }
    return null;
  }

  private void checkValue(QueryText query, String label, LabelMatch match, List<Finding> findings) {
    if (!VALUE_LABELS.contains(label) || match.value() == null) {
      return;
    }
    if (!PLAIN_ALTERNATIVES.matcher(match.value()).matches() && !match.op().equals("=") && !match.op().equals("!=")) {
      return; // a real regular expression: not checked value by value
    }
    for (String value : match.value().split("\\|")) {
      if (!written(value)) {
        findings.add(new Finding(query.file(), query.where(), "matches " + label + " " + match.op() + " \"" + value
            + "\", a value the code never logs.",
            "use a value the code writes (Outcome labels, Effects, function names)."));
      }
    }
  }

  private boolean written(String name) {
    return codeStrings.contains(name) || pending.containsKey(name);
  }
}
