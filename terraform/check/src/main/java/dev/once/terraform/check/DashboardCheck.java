package dev.once.terraform.check;

import dev.once.terraform.check.Monitoring.MetricRef;
import dev.once.terraform.check.Monitoring.QueryText;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * The dashboard shows what issue 16 asks for, as queries the check can read (MonitoringQueryCheck then checks the
 * metrics and labels they name): outcomes per function and effect, the duplicate rate, latency, spend against the
 * budget, dead-letter depth, the oldest unacked event of the trigger subscriptions, every reconciler finding
 * observability.tf turns into a metric, and for batch mode every gauge of the reconciler's (jobs in flight against
 * the cap, queue depth, the oldest wait, the oldest job) and the documents completed per hour.
 */
public final class DashboardCheck implements Check {
  @Override
  public List<Finding> findings(TerraformConfig config) {
    List<Finding> findings = new ArrayList<>();
    List<Block> dashboards = config.resources("google_monitoring_dashboard");
    if (dashboards.isEmpty()) {
      findings.add(new Finding("dashboard.tf", "google_monitoring_dashboard", "there is no dashboard.",
          "add a google_monitoring_dashboard whose dashboard_json is jsonencode(local.dashboard)."));
      return findings;
    }
    List<QueryText> queries = new ArrayList<>();
    for (Block dashboard : dashboards) {
      if (Monitoring.dashboardObject(config, dashboard).isEmpty()) {
        findings.add(new Finding(dashboard.file(), dashboard.address(), "has a dashboard_json the check cannot read.",
            "write dashboard_json = jsonencode(local.NAME) with the layout as a literal object in that local."));
      }
      queries.addAll(Monitoring.dashboardQueries(config, dashboard));
    }
    Map<String, Predicate<String>> charts = new LinkedHashMap<>();
    charts.put("outcomes per function and effect",
        q -> names(q, "outcomes") && Monitoring.groupingLabels(q).containsAll(List.of("function", "effect")));
    charts.put("the duplicate rate", q -> Monitoring.metricsIn(q).stream().anyMatch(r -> r.name().equals("outcomes")
        && r.matchers().containsKey("outcome") && "duplicate".equals(r.matchers().get("outcome").value())));
    charts.put("latency", q -> names(q, "latency_bucket"));
    charts.put("Gemini spend", q -> names(q, "gemini_spend_sum"));
    charts.put("the share of the day's budget", q -> names(q, "budget_share_bucket"));
    charts.put("dead-letter depth", q -> names(q, "pubsub_googleapis_com:subscription_num_undelivered_messages"));
    charts.put("the oldest unacked event of the trigger subscriptions",
        q -> names(q, "pubsub_googleapis_com:subscription_oldest_unacked_message_age"));
    charts.put("the documents completed per hour", q -> names(q, "documents_finished_sum"));
    for (String key : Monitoring.logMetrics(config).keySet()) {
      if (key.startsWith("reconciler_")) {
        charts.put("the reconciler's " + key.substring("reconciler_".length()),
            q -> names(q, key + "_sum") || names(q, key));
      }
      if (key.startsWith("batch_")) {
        charts.put("the batch gauge " + key.substring("batch_".length()), q -> names(q, key + "_sum") || names(q, key));
      }
    }
    Block first = dashboards.get(0);
    for (var chart : charts.entrySet()) {
      if (queries.stream().map(QueryText::text).noneMatch(chart.getValue())) {
        findings.add(new Finding(first.file(), first.address(), "shows no chart of " + chart.getKey() + ".",
            "add a tile whose prometheusQuery shows it."));
      }
    }
    return findings;
  }

  private static boolean names(String query, String metric) {
    return Monitoring.metricsIn(query).stream().map(MetricRef::name).anyMatch(metric::equals);
  }
}
