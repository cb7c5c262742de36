# What the functions log, turned into metrics, alerts and a dashboard.
#
# Every event the functions handle logs one structured JSON line to stdout:
#   {"severity":…,"message":…,"logging.googleapis.com/labels":{"function":…,"effect":…,"outcome":…},"keyHash":…,
#    "latencyMs":…,…}
# Cloud Run's logging agent moves the "logging.googleapis.com/labels" object into the entry's labels, so the
# outcome is labels.outcome and the function labels."function" (quoted: `function` is a word of the filter
# language); the other fields are jsonPayload.*. Outcomes: processed, duplicate, in_flight, conflict, rejected,
# failed, deferred (waiting for budget), unauthenticated (webhook calls refused before authentication: internet
# noise) and relisted (the reconciler listing a job it completed before: not a platform redelivery). Processed
# `analyse` lines carry jsonPayload.costMicroUsd and model. With a budget set, "gemini budget" lines carry
# jsonPayload.budgetShare (spent + reserved / budget); the reconciler's "reconciliation run" line carries
# jsonPayload.summary.* (its findings), and its "batch gauges" line, every run, jsonPayload.gauges.* (batch mode now:
# queue depth, oldest wait, jobs in flight against the cap, the oldest job). An event line that finished documents
# carries jsonPayload.documents and jsonPayload.givenUp (of them, failed for good): a sync analysis one, a batch job's
# completion all of its documents.
#
# Every metric here is named ${name_prefix}_KEY and queried in PromQL as ${local.promql_prefix}KEY
# (logging.googleapis.com/user/NAME becomes logging_googleapis_com:user_NAME): terraform/check resolves each such
# name in the alerts and the dashboard to a metric defined here, and each label to one the metric extracts.

locals {
  function_services = [
    google_cloudfunctions2_function.document_uploaded.name,
    google_cloudfunctions2_function.message_delivered.name,
    google_cloudfunctions2_function.gemini_webhook.name,
    google_cloudfunctions2_function.batch_completed.name,
    google_cloudfunctions2_function.gemini_reconciler.name,
  ]
  metric_prefix = replace(var.name_prefix, "-", "_")
  promql_prefix = "logging_googleapis_com:user_${local.metric_prefix}_"

  # Lines of the five functions.
  function_lines = join(" AND ", [
    "resource.type=\"cloud_run_revision\"",
    "resource.labels.service_name=(${join(" OR ", [for s in local.function_services : "\"${s}\""])})",
  ])
  # Their one line per event.
  event_lines = "${local.function_lines} AND labels.outcome:* AND labels.\"function\":*"

  # The reconciler's findings (jsonPayload.summary.*) worth a chart: one distribution metric each.
  reconciler_findings = {
    processed        = "jobs completed by the reconciler: their webhook never came"
    relisted         = "listed jobs completed before (by the webhook or an earlier run)"
    pending          = "jobs Gemini still reports running"
    failed           = "jobs or pages the run could not handle (retried next run)"
    deferred_resumed = "deferred documents resumed because budget was available again"
    too_old          = "listed jobs older than the retention, left alone"
  }

  # The reconciler's batch gauges (jsonPayload.gauges.*, functions/…/pipeline/BatchGauges.java): one distribution
  # metric each, one value a run; a window's sum / count is the gauge then (a log-based metric cannot be a gauge).
  batch_gauges = {
    queued                = "documents queued, waiting to be gathered into a batch job"
    gathered              = "documents gathered into jobs being made"
    oldest_queued_seconds = "seconds the oldest queued document has waited"
    jobs_in_flight        = "batch jobs gathering, submitted or running: what BATCH_MAX_JOBS_IN_FLIGHT caps"
    max_jobs_in_flight    = "the cap on jobs in flight (BATCH_MAX_JOBS_IN_FLIGHT)"
    oldest_job_seconds    = "seconds since the oldest job still running was submitted"
  }

  # Alerts on the day's Gemini budget: a metric counting budget lines at or above each share.
  budget_levels = {
    warning = { share = 0.8, meaning = "80 % of the day's Gemini budget is spent or reserved" }
    reached = { share = 1.0, meaning = "the day's Gemini budget is used up: new documents are deferred" }
  }

  # The trigger subscriptions Eventarc creates are named eventarc-REGION-TRIGGER-sub-N (the `subscription` of its
  # push deliveries), where TRIGGER is the last segment of the function's event_trigger.trigger.
  trigger_subscriptions_regex = "eventarc-${var.region}-(${join("|", [
    for f in [
      google_cloudfunctions2_function.document_uploaded,
      google_cloudfunctions2_function.message_delivered,
      google_cloudfunctions2_function.batch_completed,
    ] :
    reverse(split("/", f.event_trigger[0].trigger))[0]
  ])})-sub-[0-9]+"
}

# --- metrics ---

resource "google_logging_metric" "outcomes" {
  project     = var.project_id
  name        = "${local.metric_prefix}_outcomes"
  description = "Events handled by the once functions, by function, effect and outcome."
  filter      = local.event_lines

  metric_descriptor {
    metric_kind  = "DELTA"
    value_type   = "INT64"
    unit         = "1"
    display_name = "once outcomes"

    labels {
      key         = "function"
      value_type  = "STRING"
      description = "Function that handled the event (DocumentUploaded, MessageDelivered, GeminiWebhook, BatchCompleted, GeminiReconciler)."
    }
    labels {
      key         = "effect"
      value_type  = "STRING"
      description = "Effect the line is about (analyse, complete, publish, notify, dead-letter)."
    }
    labels {
      key         = "outcome"
      value_type  = "STRING"
      description = "processed, duplicate, in_flight, conflict, rejected, failed, deferred, unauthenticated or relisted."
    }
  }

  label_extractors = {
    "function" = "EXTRACT(labels.\"function\")"
    "effect"   = "EXTRACT(labels.effect)"
    "outcome"  = "EXTRACT(labels.outcome)"
  }

  depends_on = [google_project_service.apis]
}

resource "google_logging_metric" "latency" {
  project     = var.project_id
  name        = "${local.metric_prefix}_latency"
  description = "Time one function spent on one event (jsonPayload.latencyMs), by function and effect."
  filter      = "${local.event_lines} AND jsonPayload.latencyMs:*"

  metric_descriptor {
    metric_kind  = "DELTA"
    value_type   = "DISTRIBUTION"
    unit         = "ms"
    display_name = "once latency"

    labels {
      key        = "function"
      value_type = "STRING"
    }
    labels {
      key        = "effect"
      value_type = "STRING"
    }
  }

  value_extractor = "EXTRACT(jsonPayload.latencyMs)"
  label_extractors = {
    "function" = "EXTRACT(labels.\"function\")"
    "effect"   = "EXTRACT(labels.effect)"
  }

  bucket_options {
    exponential_buckets {
      num_finite_buckets = 24 # 1 ms to 2.3 h
      growth_factor      = 2
      scale              = 1
    }
  }

  depends_on = [google_project_service.apis]
}

resource "google_logging_metric" "gemini_spend" {
  project     = var.project_id
  name        = "${local.metric_prefix}_gemini_spend"
  description = "What Gemini cost, in micro-USD (jsonPayload.costMicroUsd of processed analyse lines, a document each in sync mode, and of processed complete lines, a batch job's documents together), by model. Its sum over a day is the day's spend."
  filter      = "${local.event_lines} AND labels.outcome=\"processed\" AND (labels.effect=\"analyse\" OR labels.effect=\"complete\") AND jsonPayload.costMicroUsd:*"

  metric_descriptor {
    metric_kind  = "DELTA"
    value_type   = "DISTRIBUTION"
    unit         = "1"
    display_name = "once Gemini spend (micro-USD)"

    labels {
      key         = "model"
      value_type  = "STRING"
      description = "Gemini model the document was analysed with."
    }
  }

  value_extractor  = "EXTRACT(jsonPayload.costMicroUsd)"
  label_extractors = { "model" = "EXTRACT(jsonPayload.model)" }

  bucket_options {
    exponential_buckets {
      num_finite_buckets = 20 # 100 micro-USD to 52 USD per document
      growth_factor      = 2
      scale              = 100
    }
  }

  depends_on = [google_project_service.apis]
}

resource "google_logging_metric" "budget_share" {
  project     = var.project_id
  name        = "${local.metric_prefix}_budget_share"
  description = "Share of the day's Gemini budget spent or reserved (jsonPayload.budgetShare of the \"gemini budget\" lines); its high quantiles over a few minutes are the current share."
  filter      = "${local.function_lines} AND jsonPayload.message=\"gemini budget\" AND jsonPayload.budgetShare:*"

  metric_descriptor {
    metric_kind  = "DELTA"
    value_type   = "DISTRIBUTION"
    unit         = "1"
    display_name = "once budget share"
  }

  value_extractor = "EXTRACT(jsonPayload.budgetShare)"

  bucket_options {
    linear_buckets {
      num_finite_buckets = 30 # 0 to 150 %, 5 % wide
      width              = 0.05
      offset             = 0
    }
  }

  depends_on = [google_project_service.apis]
}

resource "google_logging_metric" "budget" {
  for_each = local.budget_levels

  project     = var.project_id
  name        = "${local.metric_prefix}_budget_${each.key}"
  description = "\"gemini budget\" lines whose budgetShare is at least ${each.value.share}: ${each.value.meaning}."
  filter      = "${local.function_lines} AND jsonPayload.message=\"gemini budget\" AND jsonPayload.budgetShare>=${each.value.share}"

  metric_descriptor {
    metric_kind = "DELTA"
    value_type  = "INT64"
    unit        = "1"
  }

  depends_on = [google_project_service.apis]
}

resource "google_logging_metric" "reconciler" {
  for_each = local.reconciler_findings

  project     = var.project_id
  name        = "${local.metric_prefix}_reconciler_${each.key}"
  description = "Per reconciliation run: ${each.value} (jsonPayload.summary.${each.key})."
  filter      = "resource.type=\"cloud_run_revision\" AND resource.labels.service_name=\"${google_cloudfunctions2_function.gemini_reconciler.name}\" AND jsonPayload.message=\"reconciliation run\" AND jsonPayload.summary.${each.key}:*"

  metric_descriptor {
    metric_kind = "DELTA"
    value_type  = "DISTRIBUTION"
    unit        = "1"
  }

  value_extractor = "EXTRACT(jsonPayload.summary.${each.key})"

  bucket_options {
    exponential_buckets {
      num_finite_buckets = 12 # 1 to 2,048 a run
      growth_factor      = 2
      scale              = 1
    }
  }

  depends_on = [google_project_service.apis]
}

resource "google_logging_metric" "batch" {
  for_each = local.batch_gauges

  project     = var.project_id
  name        = "${local.metric_prefix}_batch_${each.key}"
  description = "Per reconciler run, batch mode: ${each.value} (jsonPayload.gauges.${each.key} of the \"batch gauges\" line)."
  filter      = "resource.type=\"cloud_run_revision\" AND resource.labels.service_name=\"${google_cloudfunctions2_function.gemini_reconciler.name}\" AND jsonPayload.message=\"batch gauges\" AND jsonPayload.gauges.${each.key}:*"

  metric_descriptor {
    metric_kind = "DELTA"
    value_type  = "DISTRIBUTION"
    unit        = "1"
  }

  value_extractor = "EXTRACT(jsonPayload.gauges.${each.key})"

  bucket_options {
    exponential_buckets {
      num_finite_buckets = 24 # 1 to 8.4 million (97 days in seconds)
      growth_factor      = 2
      scale              = 1
    }
  }

  depends_on = [google_project_service.apis]
}

# Documents finished (given a result, analysed or failed), and of them given up, by the event lines that finished
# them: its sum over an hour is the documents completed in that hour.
resource "google_logging_metric" "documents_finished" {
  project     = var.project_id
  name        = "${local.metric_prefix}_documents_finished"
  description = "Documents given a result (analysed or failed) by one event: jsonPayload.documents of its line (a sync analysis 1, a batch job's completion all its documents)."
  filter      = "${local.event_lines} AND jsonPayload.documents:*"

  metric_descriptor {
    metric_kind = "DELTA"
    value_type  = "DISTRIBUTION"
    unit        = "1"
  }

  value_extractor = "EXTRACT(jsonPayload.documents)"

  bucket_options {
    exponential_buckets {
      num_finite_buckets = 14 # 1 to 8,192 documents an event
      growth_factor      = 2
      scale              = 1
    }
  }

  depends_on = [google_project_service.apis]
}

resource "google_logging_metric" "documents_given_up" {
  project     = var.project_id
  name        = "${local.metric_prefix}_documents_given_up"
  description = "Documents given up by one event (their result failed: tries used up, no answer from their batch job, an answer holding no invoice): jsonPayload.givenUp of its line."
  filter      = "${local.event_lines} AND jsonPayload.givenUp:*"

  metric_descriptor {
    metric_kind = "DELTA"
    value_type  = "DISTRIBUTION"
    unit        = "1"
  }

  value_extractor = "EXTRACT(jsonPayload.givenUp)"

  bucket_options {
    exponential_buckets {
      num_finite_buckets = 14
      growth_factor      = 2
      scale              = 1
    }
  }

  depends_on = [google_project_service.apis]
}

# Google moving its models under the deployment (functions' ModelWatch), each key the end of a line's message:
# "gemini model unavailable" (ERROR): Google refused the model (404), documents wait, redelivered; "gemini model
# rerouted" (WARNING): Google answered with another model, billed at its prices. Each is said once per instance, so a
# count above zero is the news.
locals {
  model_lines = {
    unavailable = {
      title   = "Google no longer serves GEMINI_MODEL"
      runbook = <<-EOT
        Gemini answered 404 to a call on the configured model: Google shut it down, closed it to new projects, or
        never knew the name. Nothing is lost and nothing is billed: every document waits, its event redelivered
        (in batch mode, queued), and none is failed for it. The line's `model` and `error` fields say which model
        and Google's words.

        1. `once models` (with GEMINI_API_KEY) asks Google whether the model is served, and lists the built-in
           catalog's models (`once models --catalog`) with their prices.
        2. Set `gemini_model` to a model Google serves (the catalog's replacement is named by `once models`) and
           `terraform apply`. The redelivered events are then analysed once each; events that ran out of
           deliveries meanwhile are in the dead-letter topic: re-drive them (docs/OPERATIONS.md: dead letters).
        Runbook: docs/OPERATIONS.md, "Google deprecated, rerouted or shut down our model".
      EOT
    }
    rerouted = {
      title   = "Google answers GEMINI_MODEL with another model"
      runbook = <<-EOT
        Gemini answered a request for the configured model with another one (a deprecated model "automatically
        routed" to its successor): the analyses are recorded and billed as that model (`model`), with
        `requestedModel` and `rerouted` on the analysis and the bill. Nothing is wrong with the documents, but the
        prices, the thinking and the quality are the other model's. The line's `requested` and `answered` fields
        name both. Move `gemini_model` to the answering model (or another, `once models`) and `terraform apply`.
        Runbook: docs/OPERATIONS.md, "Google deprecated, rerouted or shut down our model".
      EOT
    }
  }
}

resource "google_logging_metric" "gemini_model" {
  for_each = local.model_lines

  project     = var.project_id
  name        = "${local.metric_prefix}_gemini_model_${each.key}"
  description = "\"gemini model ${each.key}\" lines: ${each.value.title} (said once per function instance)."
  filter      = "${local.function_lines} AND jsonPayload.message=\"gemini model ${each.key}\""

  metric_descriptor {
    metric_kind = "DELTA"
    value_type  = "INT64"
    unit        = "1"
  }

  depends_on = [google_project_service.apis]
}

# --- alerts ---
#
# Conditions are PromQL (condition_prometheus_query_language): Google's recommended language now that MQL is
# deprecated, and it can require a minimum volume, so 1 duplicate out of 3 events pages no one.
# disable_metric_validation: a log-based metric created in the same apply is not queryable for a while, and an
# alert on it would fail with 404 until then; the Pub/Sub metrics of a new subscription do not exist before its
# first message. Every alert carries its runbook in `documentation`.

# Shares per function over the last hour. Neither counts unauthenticated (internet noise at the public webhook)
# nor relisted (the reconciler seeing its own earlier work) on either side of the ratio.
locals {
  share_alerts = {
    duplicate = {
      threshold = var.duplicate_share_threshold
      runbook   = <<-EOT
        Duplicates are deliveries of events whose effect had already happened: the platform redelivered them.
        A few per thousand are normal (at-least-once delivery). A few per cent means something redelivers too
        eagerly: an ack deadline or function timeout shorter than the work, a retry storm after failures (look
        at the failed outcomes first), or a bucket with two notifications for the same upload
        (`gcloud storage buckets notifications list gs://BUCKET`). Nothing was done twice: the ledger absorbed
        them, and each cost one Firestore read.
      EOT
    }
    rejected = {
      threshold = var.rejected_share_threshold
      runbook   = <<-EOT
        Rejected events are permanently bad input (a document of the wrong type, too large, gone; a message the
        notified endpoint refuses with a 4xx), recorded with their reason in the ledger (state REJECTED, field
        error) and in `analyses` (status rejected, reason); messages are also copied to the dead-letter topic.
        A rising share means a producer sends malformed documents or messages, or a contract changed on one side
        only. `once inspect KEY` (or `dev/inspect KEY`) shows one event's records.
      EOT
    }
  }
}

resource "google_monitoring_alert_policy" "outcome_share" {
  for_each = local.share_alerts

  project               = var.project_id
  display_name          = "once: ${each.key} share above ${format("%.1f", each.value.threshold * 100)}%"
  combiner              = "OR"
  notification_channels = var.alert_notification_channels
  user_labels           = local.labels

  conditions {
    display_name = "${each.key} outcomes / all event outcomes, per function, last hour"

    condition_prometheus_query_language {
      query                     = <<-EOT
        (
          sum by (function) (increase(${local.promql_prefix}outcomes{monitored_resource="cloud_run_revision",outcome="${each.key}"}[1h]))
            /
          sum by (function) (increase(${local.promql_prefix}outcomes{monitored_resource="cloud_run_revision",outcome!~"unauthenticated|relisted"}[1h]))
        ) > ${each.value.threshold}
        and on (function)
        sum by (function) (increase(${local.promql_prefix}outcomes{monitored_resource="cloud_run_revision",outcome!~"unauthenticated|relisted"}[1h])) >= ${var.alert_min_events}
      EOT
      duration                  = "300s"
      evaluation_interval       = "60s"
      disable_metric_validation = true
    }
  }

  alert_strategy {
    auto_close = "3600s"
  }

  documentation {
    mime_type = "text/markdown"
    content   = "${each.value.runbook}\nLog lines: `labels.outcome=\"${each.key}\"` in the function's logs; `key` names the event, `message` the reason."
  }

  depends_on = [google_logging_metric.outcomes]
}

resource "google_monitoring_alert_policy" "failed" {
  project               = var.project_id
  display_name          = "once: events failing"
  combiner              = "OR"
  notification_channels = var.alert_notification_channels
  user_labels           = local.labels

  conditions {
    display_name = "at least ${var.failed_alert_min_events} failed outcomes of one function and effect in 15 minutes"

    condition_prometheus_query_language {
      query                     = <<-EOT
        sum by (function, effect) (increase(${local.promql_prefix}outcomes{monitored_resource="cloud_run_revision",outcome="failed"}[15m])) >= ${var.failed_alert_min_events}
      EOT
      duration                  = "0s"
      evaluation_interval       = "60s"
      disable_metric_validation = true
    }
  }

  alert_strategy {
    auto_close = "3600s"
  }

  documentation {
    mime_type = "text/markdown"
    content   = <<-EOT
      A failed outcome is a transient failure: the claim was released and the platform will redeliver the event
      (or, for a batch job, Gemini reported it failed). Events are not lost while they are retried, but they are
      not handled either, and after ${var.max_delivery_attempts} attempts they go to the dead-letter topic.
      An analyse line whose `reason` starts "gave up after" is a document given up for good: ${var.max_attempts}
      Gemini calls that may each have been billed failed (recorded as failed in `analyses`, published as such,
      nothing in `billing`); after the cause is fixed, upload it again (a new generation is a new document).

      1. Read the failures: Logs Explorer, `labels.outcome="failed"` and the alert's function; `message` and
         `error` say why. The ledger keeps the last error per event (`once inspect KEY`).
      2. Gemini 401/403 or "API key not valid": the key was revoked or restricted. Add a working key as a new
         version of the `${google_secret_manager_secret.gemini_api_key.secret_id}` secret, set
         `gemini_api_key_version` to it and `terraform apply` (docs/OPERATIONS.md: roll the webhook secret, same steps).
      3. Gemini 429: the key's quota is too small for `document_max_instances` x 4 calls at once; lower it or
         raise the quota.
      4. Firestore, Pub/Sub or Storage errors: check the Google Cloud status page and the functions' service
         accounts' roles (iam.tf).
      Once the cause is fixed, retried events complete on their own; dead-lettered ones need a re-drive
      (docs/OPERATIONS.md: dead letters).
    EOT
  }

  depends_on = [google_logging_metric.outcomes]
}

resource "google_monitoring_alert_policy" "trigger_backlog" {
  project               = var.project_id
  display_name          = "once: events waiting in a trigger's subscription"
  combiner              = "OR"
  notification_channels = var.alert_notification_channels
  user_labels           = local.labels

  conditions {
    display_name = "oldest unacked event of an event trigger's subscription older than ${var.unacked_age_alert_seconds} s"

    condition_prometheus_query_language {
      query                     = <<-EOT
        max by (subscription_id) (pubsub_googleapis_com:subscription_oldest_unacked_message_age{monitored_resource="pubsub_subscription",subscription_id=~"${local.trigger_subscriptions_regex}"}) > ${var.unacked_age_alert_seconds}
      EOT
      duration                  = "300s"
      evaluation_interval       = "60s"
      disable_metric_validation = true
    }
  }

  alert_strategy {
    auto_close = "3600s"
  }

  documentation {
    mime_type = "text/markdown"
    content   = <<-EOT
      An event has been waiting in a trigger's subscription for longer than ${var.unacked_age_alert_seconds} s:
      it is being retried instead of handled. The subscription (its id names the trigger: DocumentUploaded's,
      MessageDelivered's or BatchCompleted's) holds it for 24 hours; after ${var.max_delivery_attempts} failed deliveries Pub/Sub
      moves it to the dead-letter topic, where the "dead letters waiting" alert takes over.

      1. Look for failed or in_flight outcomes of that function (the "events failing" alert usually fires
         too) and fix their cause.
      2. in_flight without failures: a claim is held by an execution that died; it is taken over when its lease
         (`lease_seconds`) expires. `once stuck` lists claims held past their lease.
      3. No log lines at all: the function does not start or is not invoked. Check its revisions
         (`gcloud run services describe SERVICE --region=${var.region}`) and the trigger account's run.invoker
         grant.
    EOT
  }
}

resource "google_monitoring_alert_policy" "dead_letters" {
  project               = var.project_id
  display_name          = "once: dead letters waiting"
  combiner              = "OR"
  notification_channels = var.alert_notification_channels
  user_labels           = local.labels

  conditions {
    display_name = "messages in ${google_pubsub_subscription.dead_letter_hold.name}"

    condition_prometheus_query_language {
      query                     = <<-EOT
        sum(pubsub_googleapis_com:subscription_num_undelivered_messages{monitored_resource="pubsub_subscription",subscription_id="${google_pubsub_subscription.dead_letter_hold.name}"}) > 0
      EOT
      duration                  = "300s"
      evaluation_interval       = "60s"
      disable_metric_validation = true
    }
  }

  alert_strategy {
    auto_close = "86400s"
  }

  documentation {
    mime_type = "text/markdown"
    content   = <<-EOT
      The subscription `${google_pubsub_subscription.dead_letter_hold.name}` holds messages that were never
      delivered: results MessageDelivered refused for good (attribute `once_error` says why), and events a
      trigger failed to deliver ${var.max_delivery_attempts} times (attribute
      `CloudPubSubDeadLetterSourceSubscription` names the trigger's subscription). It keeps them for 7 days.

      List them without acknowledging them (`once redrive --dead-letter-subscription SUB --list`), fix the cause,
      then re-drive them through the same path (the ledger absorbs whatever was already done): the same command
      without `--list` acknowledges each one only once its re-drive was accepted (docs/OPERATIONS.md: dead letters).
      Acknowledge a message by hand only when deliberately giving it up: an acknowledged dead letter is gone.
    EOT
  }
}

resource "google_monitoring_alert_policy" "budget" {
  for_each = var.gemini_daily_budget_usd == null ? {} : local.budget_levels

  project               = var.project_id
  display_name          = "once: Gemini budget ${format("%.0f", each.value.share * 100)}% used"
  combiner              = "OR"
  notification_channels = var.alert_notification_channels
  user_labels           = local.labels

  conditions {
    display_name = "budget lines at or above ${each.value.share} of the day's budget in the last 15 minutes"

    condition_prometheus_query_language {
      query                     = <<-EOT
        sum(increase(${local.promql_prefix}budget_${each.key}{monitored_resource="cloud_run_revision"}[15m])) > 0
      EOT
      duration                  = "0s"
      evaluation_interval       = "60s"
      disable_metric_validation = true
    }
  }

  alert_strategy {
    auto_close = "3600s"
  }

  documentation {
    mime_type = "text/markdown"
    content   = <<-EOT
      ${each.value.meaning} (budget: ${coalesce(var.gemini_daily_budget_usd, 0)} USD a day, GEMINI_DAILY_BUDGET_USD).
      Past the budget, documents are deferred, not lost: their analyses read `deferred`, and the reconciler resumes
      them, oldest first, when budget is available again (the next day, or a raised budget).

      1. Is the spend expected? The dashboard's spend chart shows it by model; a sudden rise with duplicates or
         failures is a storm, not demand.
      2. To let deferred documents through today: raise `gemini_daily_budget_usd` and `terraform apply`; the
         next reconciler run resumes them.
      3. Otherwise nothing to do: the alert closes when the day rolls over.
    EOT
  }

  depends_on = [google_logging_metric.budget]
}

# Batch mode's gauges (keyed by the gauge), each the reconciler's last value(s) over 20 minutes (it runs every 10 by default): sum / count
# of the distribution, since a log-based metric cannot be a gauge.
locals {
  gauge_alerts = {
    oldest_queued_seconds = {
      threshold = var.batch_queue_age_alert_seconds
      title     = "oldest queued document waiting longer than ${var.batch_queue_age_alert_seconds} s"
      runbook   = <<-EOT
        The oldest document queued for a batch job has waited longer than ${var.batch_queue_age_alert_seconds} s,
        where it should wait at most BATCH_MAX_WAIT_SECONDS (${var.batch_max_wait_seconds} s) plus a reconciler period.
        Nothing is lost while it waits, but its result is late.

        1. `once stats` (batch section) and `once stuck`: how many jobs are in flight against BATCH_MAX_JOBS_IN_FLIGHT
           (${var.batch_max_jobs_in_flight}), which documents wait, which gatherings were never submitted, which jobs
           run long. The dashboard's batch panels show the same over time.
        2. Jobs in flight at the cap: documents wait for a job to complete and free a place. Look at the jobs that run
           long (the "batch job running long" alert, `once stuck`); raise `batch_max_jobs_in_flight` (at most 100,
           Gemini's limit per project, shared with anything else using the project's key) only if Gemini has room.
        3. Below the cap: the reconciler is not submitting. Its lines: "reconciliation run" (summary.jobs_submitted,
           failed), "the reconciler could not submit the batch jobs due", "batch jobs wait for room"; Gemini 429 or
           5xx on batches.create (quota, an outage); the Cloud Scheduler job `${var.name_prefix}-gemini-reconcile`
           and its last attempts. A reconciler that does not run at all writes no gauge line: the trigger backlog and
           the scheduler's own job status say so.
      EOT
    }
    oldest_job_seconds = {
      threshold = var.batch_job_age_alert_seconds
      title     = "a batch job running longer than ${var.batch_job_age_alert_seconds} s"
      runbook   = <<-EOT
        A batch job submitted more than ${var.batch_job_age_alert_seconds} s ago has not completed. Google's target
        turnaround for the Batch API is 24 hours, and a job that has not finished after 48 expires.

        1. `once stuck` lists the jobs running long (job name, gathering, documents, submitted at); `once inspect
           gemini:batches/ID` shows a job's documents.
        2. Nothing needs doing for the job itself: the webhook or, failing it, the reconciler completes it when
           Gemini ends it, expired or cancelled ones too. Meanwhile it holds a place among the jobs in flight, so
           documents queue behind it (the "oldest queued document" alert).
        3. Many jobs past the target at once: Gemini's Batch API is slow for everyone (its status page); lower
           `batch_max_documents` if large jobs are the slow ones.
      EOT
    }
  }
}

resource "google_monitoring_alert_policy" "batch_gauge" {
  for_each = local.gauge_alerts

  project               = var.project_id
  display_name          = "once: ${each.value.title}"
  combiner              = "OR"
  notification_channels = var.alert_notification_channels
  user_labels           = local.labels

  conditions {
    display_name = "${each.key} of the reconciler's batch gauges above ${each.value.threshold}"

    condition_prometheus_query_language {
      query                     = <<-EOT
        (
          sum(increase(${local.promql_prefix}batch_${each.key}_sum{monitored_resource="cloud_run_revision"}[20m]))
            /
          sum(increase(${local.promql_prefix}batch_${each.key}_count{monitored_resource="cloud_run_revision"}[20m]))
        ) > ${each.value.threshold}
      EOT
      duration                  = "0s"
      evaluation_interval       = "60s"
      disable_metric_validation = true
    }
  }

  alert_strategy {
    auto_close = "3600s"
  }

  documentation {
    mime_type = "text/markdown"
    content   = each.value.runbook
  }

  depends_on = [google_logging_metric.batch]
}

resource "google_monitoring_alert_policy" "given_up_share" {
  project               = var.project_id
  display_name          = "once: documents given up above ${format("%.1f", var.given_up_share_threshold * 100)}%"
  combiner              = "OR"
  notification_channels = var.alert_notification_channels
  user_labels           = local.labels

  conditions {
    display_name = "documents given up / documents finished, last hour"

    condition_prometheus_query_language {
      query                     = <<-EOT
        (
          sum(increase(${local.promql_prefix}documents_given_up_sum{monitored_resource="cloud_run_revision"}[1h]))
            /
          sum(increase(${local.promql_prefix}documents_finished_sum{monitored_resource="cloud_run_revision"}[1h]))
        ) > ${var.given_up_share_threshold}
        and
        sum(increase(${local.promql_prefix}documents_finished_sum{monitored_resource="cloud_run_revision"}[1h])) >= ${var.alert_min_events}
      EOT
      duration                  = "0s"
      evaluation_interval       = "60s"
      disable_metric_validation = true
    }
  }

  alert_strategy {
    auto_close = "3600s"
  }

  documentation {
    mime_type = "text/markdown"
    content   = <<-EOT
      More than ${format("%.1f", var.given_up_share_threshold * 100)} % of the documents finished in the last hour
      were given up: their result is `failed` (published as such, recorded in `analyses` with the reason, nothing
      billed for those without an answer), and the pipeline will not try them again.

      1. Why: Logs Explorer, the lines with `jsonPayload.givenUp>0` (a sync `analyse` line, a batch `complete` line)
         and their `reason`; `once inspect KEY` per document. "gave up after N tries": ${var.max_attempts} Gemini calls
         that may each have been billed failed (the "events failing" alert usually fired first: fix its cause).
         "the batch job ended FAILED/EXPIRED/CANCELLED": the job's documents got no answer. An answer holding no
         invoice: the documents are not invoices, or the prompt or model no longer fits them.
      2. Once the cause is fixed, upload the documents again (a new generation is a new document), or, for an
         answer to run again on purpose, `once invalidate` (docs/OPERATIONS.md).
    EOT
  }

  depends_on = [google_logging_metric.documents_finished, google_logging_metric.documents_given_up]
}

# A Cloud Billing budget on the whole project (Gemini calls billed to this project's key, the functions,
# Firestore), mailed to the billing account's admins: the backstop should the pipeline's own guard be
# misconfigured. Only with billing_account.
resource "google_billing_budget" "project" {
  count = var.billing_account == null ? 0 : 1

  billing_account = coalesce(var.billing_account, "unset")
  display_name    = "${var.name_prefix} (${var.project_id})"

  budget_filter {
    projects = ["projects/${data.google_project.this[0].number}"]
  }

  amount {
    dynamic "specified_amount" {
      for_each = local.billing_budget_units == null ? [] : [local.billing_budget_units]
      content {
        currency_code = "USD"
        units         = specified_amount.value
      }
    }
    last_period_amount = local.billing_budget_units == null ? true : null
  }

  dynamic "threshold_rules" {
    for_each = [0.5, 0.9, 1.0]
    content {
      threshold_percent = threshold_rules.value
    }
  }

  depends_on = [google_project_service.apis]
}

# The budget filter names the project by number. Read through the Resource Manager API, which may still be off on
# a fresh project: after the APIs are enabled.
data "google_project" "this" {
  count = var.billing_account == null ? 0 : 1

  project_id = var.project_id

  depends_on = [google_project_service.apis]
}

locals {
  billing_budget_units = (var.billing_budget_usd != null ? tostring(ceil(var.billing_budget_usd))
    : var.gemini_daily_budget_usd != null ? tostring(ceil(var.gemini_daily_budget_usd * 31)) : null)
}

resource "google_monitoring_alert_policy" "gemini_model" {
  for_each = local.model_lines

  project               = var.project_id
  display_name          = "once: ${each.value.title}"
  combiner              = "OR"
  notification_channels = var.alert_notification_channels
  user_labels           = local.labels

  conditions {
    display_name = "a \"gemini model ${each.key}\" line in 10 minutes"

    condition_prometheus_query_language {
      query                     = <<-EOT
        sum(increase(${local.promql_prefix}gemini_model_${each.key}{monitored_resource="cloud_run_revision"}[10m])) > 0
      EOT
      duration                  = "0s"
      evaluation_interval       = "60s"
      disable_metric_validation = true
    }
  }

  alert_strategy {
    auto_close = "86400s"
  }

  documentation {
    mime_type = "text/markdown"
    content   = each.value.runbook
  }

  depends_on = [google_logging_metric.gemini_model]
}
