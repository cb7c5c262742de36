package dev.once.terraform.check;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The monitoring side of a configuration as the checks read it: the log-based metrics (named
 * {@code ${local.metric_prefix}_KEY}) and every PromQL query of the alert policies and the dashboard, with
 * {@code ${each.key}} expanded for each instance of a {@code for_each} and {@code ${local.promql_prefix}KEY} kept
 * as the metric it names.
 */
final class Monitoring {
  /** A log-based metric: its key (the name after the prefix), labels, and whether it is a distribution. */
  record LogMetric(String key, Set<String> labels, boolean distribution, Block block, List<String> expressions) {}

  /** One PromQL query and where it is. */
  record QueryText(String where, String file, String text) {}

  /** A metric named in a query, with the label matchers right after it. */
  record MetricRef(String name, boolean logMetric, Map<String, LabelMatch> matchers) {}

  /** One label matcher: {@code label op "value"}; {@code value} null when it is computed. */
  record LabelMatch(String op, String value) {}

  static final String PROMQL_PREFIX = "${local.promql_prefix}";
  private static final Pattern METRIC_NAME = Pattern.compile("^\"?\\$\\{local\\.metric_prefix\\}_([a-z0-9_${}.]+)\"?$");
  private static final Pattern LOG_REF = Pattern.compile(Pattern.quote(PROMQL_PREFIX) + "([a-z0-9_]+)");
  private static final Pattern PLATFORM_REF = Pattern.compile("\\b([a-z]+_googleapis_com:[a-z0-9_]+)");
  private static final Pattern MATCHER =
      Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)\\s*(=~|!~|!=|=)\\s*\"((?:[^\"\\\\]|\\\\.)*)\"");
  private static final Pattern GROUPING = Pattern.compile("\\b(?:by|without|on|ignoring)\\s*\\(([^)]*)\\)");

  private Monitoring() {}

  /** Every google_logging_metric, one per for_each instance. */
  static Map<String, LogMetric> logMetrics(TerraformConfig config) {
    Map<String, LogMetric> metrics = new LinkedHashMap<>();
    for (Block block : config.resources("google_logging_metric")) {
      Matcher name = METRIC_NAME.matcher(block.body().path("name").asText());
      if (!name.matches()) {
        continue; // reported by MonitoringQueryCheck
      }
      Set<String> labels = new LinkedHashSet<>();
      for (JsonNode label : TerraformConfig.asList(block.nested("metric_descriptor").path("labels"))) {
        labels.add(label.path("key").asText());
      }
      boolean distribution = block.nested("metric_descriptor").path("value_type").asText().equals("DISTRIBUTION");
      List<String> expressions = new ArrayList<>();
      expressions.add(block.body().path("filter").asText());
      expressions.add(block.body().path("value_extractor").asText());
      block.body().path("label_extractors").forEach(e -> expressions.add(e.asText()));
      for (String key : instanceKeys(config, block)) {
        String metricKey = expand(name.group(1), key);
        metrics.put(metricKey, new LogMetric(metricKey, labels, distribution, block,
            expressions.stream().filter(e -> !e.isEmpty()).map(e -> expand(e, key)).toList()));
      }
    }
    return metrics;
  }

  /** The raw names of the logging metrics that do not follow the naming the queries rely on. */
  static List<Block> misnamedMetrics(TerraformConfig config) {
    return config.resources("google_logging_metric").stream()
        .filter(b -> !METRIC_NAME.matcher(b.body().path("name").asText()).matches()).toList();
  }

  /** Every PromQL condition of every alert policy (one per for_each instance). */
  static List<QueryText> alertQueries(TerraformConfig config, Block policy) {
    List<QueryText> queries = new ArrayList<>();
    for (String key : instanceKeys(config, policy)) {
      for (JsonNode condition : TerraformConfig.asList(policy.body().path("conditions"))) {
        for (JsonNode promql : TerraformConfig.asList(condition.path("condition_prometheus_query_language"))) {
          queries.add(new QueryText(policy.address() + (key == null ? "" : "[\"" + key + "\"]"), policy.file(),
              expand(promql.path("query").asText(), key)));
        }
      }
    }
    return queries;
  }

  /** Every prometheusQuery of a dashboard whose dashboard_json is jsonencode(local.X). */
  static List<QueryText> dashboardQueries(TerraformConfig config, Block dashboard) {
    List<QueryText> queries = new ArrayList<>();
    dashboardObject(config, dashboard).ifPresent(object -> collect(config, dashboard, object, queries));
    return queries;
  }

  static Optional<JsonNode> dashboardObject(TerraformConfig config, Block dashboard) {
    Matcher local = Pattern.compile("^\\$\\{jsonencode\\(local\\.([A-Za-z0-9_]+)\\)\\}$")
        .matcher(dashboard.body().path("dashboard_json").asText());
    if (!local.matches()) {
      return Optional.empty();
    }
    return config.locals().stream().filter(l -> l.name().equals(local.group(1))).findFirst().map(Block::body);
  }

  private static void collect(TerraformConfig config, Block dashboard, JsonNode node, List<QueryText> out) {
    if (node.isObject()) {
      for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext();) {
        var field = it.next();
        if (field.getKey().equals("prometheusQuery")) {
          out.add(
              new QueryText(dashboard.address(), dashboard.file(), resolveLocal(config, field.getValue().asText())));
        } else {
          collect(config, dashboard, field.getValue(), out);
        }
      }
    } else if (node.isArray()) {
      node.forEach(child -> collect(config, dashboard, child, out));
    }
  }

  /** {@code ${local.a.b}} to the text of that local's key, when it is one; the text itself otherwise. */
  static String resolveLocal(TerraformConfig config, String text) {
    Matcher m = Pattern.compile("^\\$\\{local\\.([A-Za-z0-9_]+)\\.([A-Za-z0-9_]+)\\}$").matcher(text);
    if (!m.matches()) {
      return text;
    }
    return config.locals().stream().filter(l -> l.name().equals(m.group(1))).findFirst()
        .map(l -> l.body().path(m.group(2))).filter(JsonNode::isTextual).map(JsonNode::asText).orElse(text);
  }

  /** The metrics a query names, each with its label matchers. */
  static List<MetricRef> metricsIn(String query) {
    List<MetricRef> refs = new ArrayList<>();
    Matcher log = LOG_REF.matcher(query);
    while (log.find()) {
      refs.add(new MetricRef(log.group(1), true, matchersAfter(query, log.end())));
    }
    Matcher platform = PLATFORM_REF.matcher(query);
    while (platform.find()) {
      if (!platform.group(1).startsWith("logging_googleapis_com")) {
        refs.add(new MetricRef(platform.group(1), false, matchersAfter(query, platform.end())));
      }
    }
    return refs;
  }

  /** Labels of by/without/on/ignoring clauses. */
  static Set<String> groupingLabels(String query) {
    Set<String> labels = new LinkedHashSet<>();
    Matcher m = GROUPING.matcher(query);
    while (m.find()) {
      for (String label : m.group(1).split(",")) {
        if (!label.isBlank()) {
          labels.add(label.strip());
        }
      }
    }
    return labels;
  }

  private static Map<String, LabelMatch> matchersAfter(String query, int at) {
    Map<String, LabelMatch> matchers = new LinkedHashMap<>();
    if (at >= query.length() || query.charAt(at) != '{') {
      return matchers;
    }
    int end = at + 1;
    int depth = 0; // ${…} inside the selector
    while (end < query.length() && (query.charAt(end) != '}' || depth > 0)) {
      if (query.startsWith("${", end)) {
        depth++;
        end++;
      } else if (query.charAt(end) == '}') {
        depth--;
      }
      end++;
    }
    Matcher m = MATCHER.matcher(query.substring(at + 1, end));
    while (m.find()) {
      String value = m.group(3);
      matchers.put(m.group(1), new LabelMatch(m.group(2), value.contains("${") ? null : value));
    }
    return matchers;
  }

  /** The for_each keys of a block (one null key when it has none); conditional maps count their non-empty side. */
  static List<String> instanceKeys(TerraformConfig config, Block block) {
    JsonNode forEach = block.body().path("for_each");
    if (forEach.isMissingNode()) {
      return Collections.singletonList(null);
    }
    Matcher conditional =
        Pattern.compile("^\\$\\{.*\\?\\s*\\{\\}\\s*:\\s*(local\\.[A-Za-z0-9_]+)\\}$").matcher(forEach.asText());
    JsonNode keysOf = conditional.matches() ? config.locals().stream()
        .filter(l -> ("local." + l.name()).equals(conditional.group(1))).findFirst().map(Block::body).orElse(forEach)
        : forEach;
    return ReferenceCheck.forEachKeys(config, keysOf).map(keys -> List.copyOf(keys)).orElse(List.of());
  }

  /** Whether a block's for_each may be empty (created only when some variable is set). */
  static boolean conditional(Block block) {
    return block.body().path("for_each").asText().contains("? {}") || block.body().has("count");
  }

  private static String expand(String text, String key) {
    return key == null ? text : text.replace("${each.key}", key);
  }
}
