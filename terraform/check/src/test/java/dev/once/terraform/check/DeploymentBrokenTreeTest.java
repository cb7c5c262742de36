package dev.once.terraform.check;

import static dev.once.terraform.check.Trees.assertOneFinding;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.once.terraform.check.Trees.Copy;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Each check of the deployment's operability (fresh project, dead letters, alerts, dashboard, metric names) catches
 * a broken copy of terraform/ and says where and what to fix.
 */
class DeploymentBrokenTreeTest {

  // --- a fresh project ---

  private static final Copy NO_EVENTARC_AGENT = Copy.replacing("agents.tf",
      "service = \"eventarc.googleapis.com\"", "service = \"eventarcpublishing.googleapis.com\"");

  @Test
  void aMissingEventarcAgent_isReported() {
    List<Finding> findings = new FreshProjectCheck().findings(NO_EVENTARC_AGENT.config());
    assertTrue(
        findings.get(0).toString().startsWith("agents.tf: google_project_service_identity: the eventarc.googleapis.com"
            + " service agent is not created"),
        findings::toString);
    assertTrue(findings.stream().anyMatch(f -> f.problem().contains("nothing waits")), findings::toString);
  }

  private static final Copy NO_EVENTARC_ROLE = Copy.replacing("agents.tf",
      "role    = \"roles/eventarc.serviceAgent\"", "role    = \"roles/eventarc.eventReceiver\"");

  @Test
  void anEventarcAgentWithoutItsRole_isReported() {
    assertOneFinding(new FreshProjectCheck().findings(NO_EVENTARC_ROLE.config()), "agents.tf",
        "google_project_service_identity.eventarc", "roles/eventarc.serviceAgent");
  }

  private static final Copy SLEEP_WITHOUT_EVENTARC = Copy.replacing("agents.tf",
      "eventarc = google_project_iam_member.eventarc_agent.id\n", "");

  @Test
  void aWaitThatIgnoresAnAgent_isReported() {
    List<Finding> findings = new FreshProjectCheck().findings(SLEEP_WITHOUT_EVENTARC.config());
    assertOneFinding(findings, "agents.tf", "time_sleep", "nothing waits for the service agents' roles to propagate");
  }

  private static final Copy TRIGGER_DOES_NOT_WAIT = Copy.replacing("functions.tf",
      "time_sleep.agents_ready, # the service agents exist and their roles have propagated (agents.tf)\n", "");

  @Test
  void aTriggerThatDoesNotWait_isReported() {
    assertOneFinding(new FreshProjectCheck().findings(TRIGGER_DOES_NOT_WAIT.config()), "functions.tf",
        "google_cloudfunctions2_function.document_uploaded", "does not wait for the service agents",
        "add time_sleep.agents_ready to its depends_on");
  }

  private static final Copy NO_QUOTA_PROJECT = Copy.replacing("versions.tf",
      "user_project_override = true\n  billing_project       = var.project_id\n}\n\nprovider \"google-beta\"",
      "user_project_override = false\n  billing_project       = var.project_id\n}\n\nprovider \"google-beta\"");

  @Test
  void aProviderWithoutQuotaProject_isReported() {
    assertOneFinding(new FreshProjectCheck().findings(NO_QUOTA_PROJECT.config()), "versions.tf", "provider.google",
        "requires a quota project");
  }

  private static final Copy NO_RESOURCE_MANAGER = Copy.replacing("main.tf",
      "\"cloudresourcemanager.googleapis.com\",", "");

  @Test
  void aMissingResourceManagerApi_isReported() {
    assertOneFinding(new FreshProjectCheck().findings(NO_RESOURCE_MANAGER.config()), "main.tf",
        "google_project_service.apis", "does not enable cloudresourcemanager.googleapis.com");
  }

  private static final Copy PROJECT_READ_BEFORE_THE_APIS = Copy.replacing("observability.tf",
      "project_id = var.project_id\n\n  depends_on = [google_project_service.apis]\n}",
      "project_id = var.project_id\n}");

  @Test
  void aDataSourceReadBeforeTheApisAreOn_isReported() {
    assertOneFinding(new FreshProjectCheck().findings(PROJECT_READ_BEFORE_THE_APIS.config()), "observability.tf",
        "data.google_project.this", "may still be off on a fresh project",
        "add depends_on = [google_project_service.apis]");
  }

  // --- provider versions ---

  private static final Copy GOOGLE_UP_TO_8 = Copy.replacing("versions.tf",
      "source  = \"hashicorp/google\"\n      version = \">= 6.33, < 8.0\"",
      "source  = \"hashicorp/google\"\n      version = \">= 6.33, < 9.0\"");

  @Test
  void aProviderRangeAdmittingAnUncheckedMajor_isReported() {
    assertOneFinding(new ProviderVersionCheck().findings(GOOGLE_UP_TO_8.config()), "versions.tf",
        "required_providers.google", "admits hashicorp/google major [8]", "checked: [6, 7]");
  }

  private static final Copy BETA_UNBOUNDED = Copy.replacing("versions.tf",
      "source  = \"hashicorp/google-beta\"\n      version = \">= 6.33, < 8.0\"",
      "source  = \"hashicorp/google-beta\"\n      version = \">= 6.33\"");

  @Test
  void aProviderRangeWithoutUpperBound_isReported() {
    assertOneFinding(new ProviderVersionCheck().findings(BETA_UNBOUNDED.config()), "versions.tf",
        "required_providers.google-beta", "has no upper bound", "< 7.0");
  }

  @Test
  void versionConstraints_areReadAsTheMajorsTheyAdmit() {
    assertEquals(List.of(6, 6), majors(">= 6.33, < 7.0"));
    assertEquals(List.of(6, 7), majors(">= 6.33, < 8.0"));
    assertEquals(List.of(6, 7), majors(">= 6.33, < 7.1"));
    assertEquals(List.of(6, 6), majors("~> 6.33"));
    assertEquals(List.of(6, 6), majors("~> 6.33.0"));
    assertEquals(List.of(6, 6), majors("6.40.0"));
    assertEquals(List.of(2, 3), majors(">= 2.4, <= 3.1"));
    assertEquals(1_000, majors("~> 6").get(1));
    assertEquals(1_000, majors(">= 6.33").get(1));
    assertTrue(ProviderVersionCheck.admittedMajors("latest").isEmpty());
  }

  private static List<Integer> majors(String range) {
    int[] admitted = ProviderVersionCheck.admittedMajors(range).orElseThrow();
    return List.of(admitted[0], admitted[1]);
  }

  // --- the schedule ---

  private static final Copy SCHEDULER_GETS = Copy.replacing("scheduler.tf", "http_method = \"POST\"",
      "http_method = \"GET\"");

  @Test
  void aSchedulerJobThatDoesNotPost_isReported() {
    assertOneFinding(new SchedulerCheck().findings(SCHEDULER_GETS.config()), "scheduler.tf",
        "google_cloud_scheduler_job.reconcile", "sends http_method GET", "answer 405");
  }

  // --- dead letters ---

  private static final Copy ONE_TRIGGER_WITHOUT_DEAD_LETTER = Copy.replacing("pubsub.tf",
      "document_uploaded = google_cloudfunctions2_function.document_uploaded.event_trigger[0].trigger\n", "");

  @Test
  void aTriggerWithoutDeadLetterPolicy_isReported() {
    assertOneFinding(new DeadLetterCheck().findings(ONE_TRIGGER_WITHOUT_DEAD_LETTER.config()), "functions.tf",
        "google_cloudfunctions2_function.document_uploaded", "gets no dead-letter policy",
        "terraform_data.trigger_dead_letter");
  }

  private static final Copy NO_SUBSCRIBER_GRANT = Copy.replacing("pubsub.tf",
      "--role=roles/pubsub.subscriber", "--role=roles/pubsub.viewer");

  @Test
  void aDeadLetterPolicyWithoutTheAgentsSubscriberRole_isReported() {
    List<Finding> findings = new DeadLetterCheck().findings(NO_SUBSCRIBER_GRANT.config());
    assertEquals(3, findings.size(), findings::toString); // the three triggers
    assertTrue(findings.stream().allMatch(f -> f.problem().contains("gets no dead-letter policy")), findings::toString);
  }

  private static final Copy AGENT_CANNOT_PUBLISH = Copy.replacing("pubsub.tf",
      "member  = \"serviceAccount:${google_project_service_identity.pubsub.email}\"",
      "member  = google_service_account.trigger.member");

  @Test
  void anAgentThatCannotPublishDeadLetters_isReported() {
    assertOneFinding(new DeadLetterCheck().findings(AGENT_CANNOT_PUBLISH.config()), "pubsub.tf",
        "google_pubsub_topic_iam_member", "may not publish to the dead-letter topic");
  }

  // --- alerts ---

  private static final Copy NO_FAILED_ALERT = Copy.replacing("observability.tf",
      "outcome=\"failed\"}[15m]", "outcome=\"conflict\"}[15m]");

  @Test
  void noAlertOnFailedOutcomes_isReported() {
    assertOneFinding(new AlertCheck().findings(NO_FAILED_ALERT.config()), "observability.tf",
        "google_monitoring_alert_policy", "no alert fires on failed outcomes");
  }

  private static final Copy NO_BACKLOG_ALERT = Copy.replacing("observability.tf",
      "max by (subscription_id) (pubsub_googleapis_com:subscription_oldest_unacked_message_age",
      "max by (subscription_id) (pubsub_googleapis_com:subscription_num_undelivered_messages");

  @Test
  void noAlertOnTheTriggerBacklog_isReported() {
    assertOneFinding(new AlertCheck().findings(NO_BACKLOG_ALERT.config()), "observability.tf",
        "google_monitoring_alert_policy", "oldest unacked event of the trigger subscriptions");
  }

  private static final Copy ALERT_WITHOUT_RUNBOOK = Copy.replacing("observability.tf",
      "content   = <<-EOT\n      The subscription", "content   = \"\"\n    foo = <<-EOT\n      The subscription");

  @Test
  void anAlertWithoutRunbook_isReported() {
    List<Finding> findings = new AlertCheck().findings(ALERT_WITHOUT_RUNBOOK.config());
    assertOneFinding(findings, "observability.tf", "google_monitoring_alert_policy.dead_letters", "has no runbook");
  }

  private static final Copy VALIDATED_METRIC = Copy.replacing("observability.tf",
      "disable_metric_validation = true\n    }\n  }\n\n  alert_strategy {\n    auto_close = \"86400s\"",
      "disable_metric_validation = false\n    }\n  }\n\n  alert_strategy {\n    auto_close = \"86400s\"");

  @Test
  void anAlertThatValidatesItsMetric_isReported() {
    assertOneFinding(new AlertCheck().findings(VALIDATED_METRIC.config()), "observability.tf",
        "google_monitoring_alert_policy.dead_letters", "fails with 404", "disable_metric_validation = true");
  }

  private static final Copy NOISY_SHARE = Copy.replacing("observability.tf",
      "outcome!~\"unauthenticated|relisted\"}[1h]))\n        ) >", "outcome!~\"relisted\"}[1h]))\n        ) >");

  @Test
  void aShareAlertCountingUnauthenticatedCalls_isReported() {
    List<Finding> findings = new AlertCheck().findings(NOISY_SHARE.config());
    assertEquals(2, findings.size(), findings::toString); // the duplicate and the rejected instance
    assertTrue(findings.get(0).toString()
        .startsWith("observability.tf: google_monitoring_alert_policy.outcome_share[\"duplicate\"]:"
            + " counts unauthenticated outcomes"),
        findings::toString);
  }

  private static final Copy TOO_FEW_ALERTS = Copy.replacing("observability.tf",
      "resource \"google_monitoring_alert_policy\" \"failed\" {\n  project ",
      "resource \"google_monitoring_alert_policy\" \"failed\" {\n  count = var.alert_min_events > 1000 ? 1 : 0\n  project ");

  @Test
  void fewerThanTenAlertsWhateverTheVariables_isReported() {
    List<Finding> findings = new AlertCheck().findings(TOO_FEW_ALERTS.config());
    assertTrue(findings.stream().anyMatch(f -> f.problem().startsWith("only 9 alert policies exist")),
        findings::toString);
  }

  private static final Copy NO_MODEL_ALERT = Copy.replacing("observability.tf",
      "sum(increase(${local.promql_prefix}gemini_model_${each.key}{",
      "sum(increase(${local.promql_prefix}gemini_model_${each.key}_x{");

  @Test
  void noAlertOnAModelGoogleNoLongerServes_isReported() {
    List<Finding> findings = new AlertCheck().findings(NO_MODEL_ALERT.config());
    assertTrue(findings.stream().anyMatch(f -> f.problem().startsWith("no alert fires when Google stops serving")),
        findings::toString);
  }

  private static final Copy NO_QUEUE_AGE_ALERT = Copy.replacing("observability.tf",
      "    oldest_queued_seconds = {\n      threshold", "    queued = {\n      threshold");

  @Test
  void noAlertOnTheOldestQueuedDocument_isReported() {
    assertOneFinding(new AlertCheck().findings(NO_QUEUE_AGE_ALERT.config()), "observability.tf",
        "google_monitoring_alert_policy", "no alert watches the oldest queued document's wait");
  }

  private static final Copy NO_JOB_AGE_ALERT = Copy.replacing("observability.tf",
      "    oldest_job_seconds = {\n      threshold", "    jobs_in_flight = {\n      threshold");

  @Test
  void noAlertOnTheOldestRunningJob_isReported() {
    assertOneFinding(new AlertCheck().findings(NO_JOB_AGE_ALERT.config()), "observability.tf",
        "google_monitoring_alert_policy", "no alert watches the oldest running batch job");
  }

  private static final Copy NO_GIVEN_UP_ALERT = Copy.replacing("observability.tf",
      "documents_given_up_sum{monitored_resource=\"cloud_run_revision\"}[1h]))\n            /",
      "documents_finished_sum{monitored_resource=\"cloud_run_revision\"}[1h]))\n            /");

  @Test
  void noAlertOnTheDocumentsGivenUp_isReported() {
    assertOneFinding(new AlertCheck().findings(NO_GIVEN_UP_ALERT.config()), "observability.tf",
        "google_monitoring_alert_policy", "no alert watches the documents given up");
  }

  // --- dashboard and metric names ---

  private static final Copy DASHBOARD_WITHOUT_QUEUE_DEPTH = Copy.replacing("dashboard.tf",
      "timeSeriesQuery = { prometheusQuery = local.dashboard_queries.batch_queued }",
      "timeSeriesQuery = { prometheusQuery = local.dashboard_queries.batch_gathered }");

  @Test
  void aDashboardWithoutTheBatchQueueDepth_isReported() {
    assertOneFinding(new DashboardCheck().findings(DASHBOARD_WITHOUT_QUEUE_DEPTH.config()), "dashboard.tf",
        "google_monitoring_dashboard.once", "shows no chart of the batch gauge queued");
  }

  private static final Copy DASHBOARD_WITHOUT_COMPLETED = Copy.replacing("dashboard.tf",
      "timeSeriesQuery = { prometheusQuery = local.dashboard_queries.documents_finished }",
      "timeSeriesQuery = { prometheusQuery = local.dashboard_queries.documents_given_up }");

  @Test
  void aDashboardWithoutTheDocumentsCompletedPerHour_isReported() {
    assertOneFinding(new DashboardCheck().findings(DASHBOARD_WITHOUT_COMPLETED.config()), "dashboard.tf",
        "google_monitoring_dashboard.once", "shows no chart of the documents completed per hour");
  }

  private static final Copy UNLOGGED_GAUGE = Copy.replacing("observability.tf",
      "    oldest_job_seconds    = \"seconds since", "    oldest_run_seconds    = \"seconds since");

  @Test
  void aGaugeTheReconcilerDoesNotLog_isReported() {
    List<Finding> findings = MonitoringQueryCheck.forCode(Trees.ROOT).findings(UNLOGGED_GAUGE.config());
    assertTrue(findings.stream().anyMatch(f -> f.address().equals("google_logging_metric.batch")
        && f.problem().contains("reads \"oldest_run_seconds\" from the log lines")), findings::toString);
  }

  private static final Copy DASHBOARD_WITHOUT_DEAD_LETTERS = Copy.replacing("dashboard.tf",
      "sum(pubsub_googleapis_com:subscription_num_undelivered_messages{",
      "sum(pubsub_googleapis_com:subscription_oldest_unacked_message_age{");

  @Test
  void aDashboardWithoutDeadLetterDepth_isReported() {
    assertOneFinding(new DashboardCheck().findings(DASHBOARD_WITHOUT_DEAD_LETTERS.config()), "dashboard.tf",
        "google_monitoring_dashboard.once", "shows no chart of dead-letter depth");
  }

  private static final Copy DASHBOARD_UNKNOWN_METRIC = Copy.replacing("dashboard.tf",
      "${local.promql_prefix}gemini_spend_sum", "${local.promql_prefix}gemini_cost_sum");

  @Test
  void aDashboardMetricNotDefined_isReported() {
    List<Finding> findings = MonitoringQueryCheck.forCode(Trees.ROOT).findings(DASHBOARD_UNKNOWN_METRIC.config());
    assertEquals(2, findings.size(), findings::toString); // and its `by (model)` now groups by nothing known
    assertTrue(findings.get(0).toString().startsWith("dashboard.tf: google_monitoring_dashboard.once: names"
        + " ${local.promql_prefix}gemini_cost_sum, which no google_logging_metric of this configuration defines"),
        findings::toString);
  }

  private static final Copy DASHBOARD_UNKNOWN_LABEL = Copy.replacing("dashboard.tf",
      "sum by (model) (increase(", "sum by (modelName) (increase(");

  @Test
  void aDashboardGroupingByALabelTheMetricLacks_isReported() {
    assertOneFinding(MonitoringQueryCheck.forCode(Trees.ROOT).findings(DASHBOARD_UNKNOWN_LABEL.config()),
        "dashboard.tf",
        "google_monitoring_dashboard.once", "groups by modelName");
  }

  private static final Copy UNLOGGED_OUTCOME = Copy.replacing("dashboard.tf",
      "outcome=\"duplicate\"}[1h]", "outcome=\"duplicated\"}[1h]");

  @Test
  void aLabelValueTheCodeNeverLogs_isReported() {
    List<Finding> findings = MonitoringQueryCheck.forCode(Trees.ROOT).findings(UNLOGGED_OUTCOME.config());
    assertOneFinding(findings, "dashboard.tf", "matches outcome = \"duplicated\", a value the code never logs");
  }

  private static final Copy UNLOGGED_FIELD = Copy.replacing("observability.tf",
      "value_extractor = \"EXTRACT(jsonPayload.latencyMs)\"",
      "value_extractor = \"EXTRACT(jsonPayload.latencyMillis)\"");

  @Test
  void aMetricReadingAFieldTheCodeNeverLogs_isReported() {
    assertOneFinding(MonitoringQueryCheck.forCode(Trees.ROOT).findings(UNLOGGED_FIELD.config()), "observability.tf",
        "google_logging_metric.latency", "reads \"latencyMillis\" from the log lines");
  }

  @Test
  void aPendingLogNameTheCodeWritesNow_mustLeaveTheList() {
    Set<String> code = MonitoringQueryCheck.strings(JavaSources.of(Trees.ROOT));
    List<Finding> findings = new MonitoringQueryCheck(code,
        Map.of("deferred_resumed", "reconciler summary field: deferred documents resumed")).findings(Trees.real());
    assertOneFinding(findings, "MonitoringQueryCheck.java", "\"deferred_resumed\" is written by the code now");
  }
}
