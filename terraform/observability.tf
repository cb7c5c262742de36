# Every event the functions handle logs one structured JSON line to stdout:
#   {"severity":…,"message":…,"logging.googleapis.com/labels":{"function":…,"effect":…,"outcome":…},"key":…,…}
# Cloud Run's logging agent moves the "logging.googleapis.com/labels" object into the entry's labels, so the
# outcome is labels.outcome and the function labels."function" (quoted: `function` is a word of the filter
# language). The metric counts those lines by function and outcome.

locals {
  function_services = [
    google_cloudfunctions2_function.document_uploaded.name,
    google_cloudfunctions2_function.message_delivered.name,
    google_cloudfunctions2_function.gemini_webhook.name,
    google_cloudfunctions2_function.gemini_reconciler.name,
  ]
  outcomes_metric = "${replace(var.name_prefix, "-", "_")}_outcomes"
  # The PromQL name of the user-defined log-based metric logging.googleapis.com/user/NAME: the first "/" becomes
  # ":" and the other "." and "/" become "_".
  outcomes_promql = "logging_googleapis_com:user_${local.outcomes_metric}"
}

resource "google_logging_metric" "outcomes" {
  project     = var.project_id
  name        = local.outcomes_metric
  description = "Events handled by the once functions, by function and outcome (processed, duplicate, in_flight, conflict, rejected, failed)."

  filter = join(" AND ", [
    "resource.type=\"cloud_run_revision\"",
    "resource.labels.service_name=(${join(" OR ", [for s in local.function_services : "\"${s}\""])})",
    "labels.outcome:*",
    "labels.\"function\":*",
  ])

  metric_descriptor {
    metric_kind  = "DELTA"
    value_type   = "INT64"
    unit         = "1"
    display_name = "once outcomes"

    labels {
      key         = "function"
      value_type  = "STRING"
      description = "Function that handled the event (DocumentUploaded, MessageDelivered, GeminiWebhook, GeminiReconciler)."
    }
    labels {
      key         = "outcome"
      value_type  = "STRING"
      description = "processed, duplicate, in_flight, conflict, rejected or failed."
    }
  }

  label_extractors = {
    "function" = "EXTRACT(labels.\"function\")"
    "outcome"  = "EXTRACT(labels.outcome)"
  }

  depends_on = [google_project_service.apis]
}

# Both alerts are ratios of series of that one metric, written in PromQL (condition_prometheus_query_language):
# Google's recommended language for new conditions now that MQL is deprecated, and unlike a threshold condition
# with a denominator filter it can also require a minimum volume, so a quiet hour with 1 duplicate in 3 events
# does not page anyone. Shares are per function over the last hour.
locals {
  share_alerts = {
    duplicate = {
      threshold = var.duplicate_share_threshold
      meaning   = "A few duplicates per thousand are normal (at-least-once delivery). A few per cent means something redelivers too eagerly: an ack deadline or function timeout shorter than the work, a retry storm after failures, or a bucket with two notifications for the same upload."
    }
    rejected = {
      threshold = var.rejected_share_threshold
      meaning   = "Rejected events are permanently bad input, recorded with their reason in the ledger (state REJECTED, field error) and, for messages, copied to the dead-letter topic. A rising share means a producer sends malformed documents or messages, or a contract changed on one side only."
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
    display_name = "${each.key} outcomes / all outcomes, per function, last hour"

    condition_prometheus_query_language {
      query               = <<-EOT
        (
          sum by (function) (increase(${local.outcomes_promql}{monitored_resource="cloud_run_revision",outcome="${each.key}"}[1h]))
            /
          sum by (function) (increase(${local.outcomes_promql}{monitored_resource="cloud_run_revision"}[1h]))
        ) > ${each.value.threshold}
        and on (function)
        sum by (function) (increase(${local.outcomes_promql}{monitored_resource="cloud_run_revision"}[1h])) >= ${var.alert_min_events}
      EOT
      duration            = "300s"
      evaluation_interval = "60s"
    }
  }

  alert_strategy {
    auto_close = "3600s"
  }

  documentation {
    mime_type = "text/markdown"
    content   = "${each.value.meaning}\n\nLook at the function's log lines with `labels.outcome=\"${each.key}\"`: `key` names the event, `message` the reason."
  }

  depends_on = [google_logging_metric.outcomes]
}
