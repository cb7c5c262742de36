# One dashboard: what the pipeline does, how fast, what it costs, and what waits. Every chart is a PromQL query over
# the metrics of observability.tf and the Pub/Sub subscriptions' own metrics. The layout is a literal object (no
# `for`), so that terraform/check can read every query and check the metrics and labels it names.

locals {
  dashboard_queries = {
    outcomes = <<-EOT
      sum by (function, effect, outcome) (rate(${local.promql_prefix}outcomes{monitored_resource="cloud_run_revision"}[5m]))
    EOT
    duplicate_rate = <<-EOT
      sum by (function) (rate(${local.promql_prefix}outcomes{monitored_resource="cloud_run_revision",outcome="duplicate"}[1h]))
        /
      sum by (function) (rate(${local.promql_prefix}outcomes{monitored_resource="cloud_run_revision",outcome!~"unauthenticated|relisted"}[1h]))
    EOT
    latency_p50 = <<-EOT
      histogram_quantile(0.5, sum by (le, function) (rate(${local.promql_prefix}latency_bucket{monitored_resource="cloud_run_revision"}[5m])))
    EOT
    latency_p99 = <<-EOT
      histogram_quantile(0.99, sum by (le, function) (rate(${local.promql_prefix}latency_bucket{monitored_resource="cloud_run_revision"}[5m])))
    EOT
    spend = <<-EOT
      sum by (model) (increase(${local.promql_prefix}gemini_spend_sum{monitored_resource="cloud_run_revision"}[1h])) / 1000000
    EOT
    budget_share = <<-EOT
      histogram_quantile(0.99, sum by (le) (increase(${local.promql_prefix}budget_share_bucket{monitored_resource="cloud_run_revision"}[15m])))
    EOT
    dead_letters = <<-EOT
      sum(pubsub_googleapis_com:subscription_num_undelivered_messages{monitored_resource="pubsub_subscription",subscription_id="${google_pubsub_subscription.dead_letter_hold.name}"})
    EOT
    trigger_backlog = <<-EOT
      max by (subscription_id) (pubsub_googleapis_com:subscription_oldest_unacked_message_age{monitored_resource="pubsub_subscription",subscription_id=~"${local.trigger_subscriptions_regex}"})
    EOT
    reconciler_processed = <<-EOT
      sum(increase(${local.promql_prefix}reconciler_processed_sum{monitored_resource="cloud_run_revision"}[1h]))
    EOT
    reconciler_relisted = <<-EOT
      sum(increase(${local.promql_prefix}reconciler_relisted_sum{monitored_resource="cloud_run_revision"}[1h]))
    EOT
    reconciler_pending = <<-EOT
      sum(increase(${local.promql_prefix}reconciler_pending_sum{monitored_resource="cloud_run_revision"}[1h]))
    EOT
    reconciler_failed = <<-EOT
      sum(increase(${local.promql_prefix}reconciler_failed_sum{monitored_resource="cloud_run_revision"}[1h]))
    EOT
    reconciler_deferred_resumed = <<-EOT
      sum(increase(${local.promql_prefix}reconciler_deferred_resumed_sum{monitored_resource="cloud_run_revision"}[1h]))
    EOT
    reconciler_too_old = <<-EOT
      sum(increase(${local.promql_prefix}reconciler_too_old_sum{monitored_resource="cloud_run_revision"}[1h]))
    EOT
    # Batch mode: the reconciler's gauges (one value a run, so the mean over 20 minutes is its latest), and the
    # documents the event lines finished.
    batch_jobs_in_flight = <<-EOT
      sum(increase(${local.promql_prefix}batch_jobs_in_flight_sum{monitored_resource="cloud_run_revision"}[20m])) / sum(increase(${local.promql_prefix}batch_jobs_in_flight_count{monitored_resource="cloud_run_revision"}[20m]))
    EOT
    batch_max_jobs_in_flight = <<-EOT
      sum(increase(${local.promql_prefix}batch_max_jobs_in_flight_sum{monitored_resource="cloud_run_revision"}[20m])) / sum(increase(${local.promql_prefix}batch_max_jobs_in_flight_count{monitored_resource="cloud_run_revision"}[20m]))
    EOT
    batch_queued = <<-EOT
      sum(increase(${local.promql_prefix}batch_queued_sum{monitored_resource="cloud_run_revision"}[20m])) / sum(increase(${local.promql_prefix}batch_queued_count{monitored_resource="cloud_run_revision"}[20m]))
    EOT
    batch_gathered = <<-EOT
      sum(increase(${local.promql_prefix}batch_gathered_sum{monitored_resource="cloud_run_revision"}[20m])) / sum(increase(${local.promql_prefix}batch_gathered_count{monitored_resource="cloud_run_revision"}[20m]))
    EOT
    batch_oldest_queued_seconds = <<-EOT
      sum(increase(${local.promql_prefix}batch_oldest_queued_seconds_sum{monitored_resource="cloud_run_revision"}[20m])) / sum(increase(${local.promql_prefix}batch_oldest_queued_seconds_count{monitored_resource="cloud_run_revision"}[20m]))
    EOT
    batch_oldest_job_seconds = <<-EOT
      sum(increase(${local.promql_prefix}batch_oldest_job_seconds_sum{monitored_resource="cloud_run_revision"}[20m])) / sum(increase(${local.promql_prefix}batch_oldest_job_seconds_count{monitored_resource="cloud_run_revision"}[20m]))
    EOT
    documents_finished = <<-EOT
      sum(increase(${local.promql_prefix}documents_finished_sum{monitored_resource="cloud_run_revision"}[1h]))
    EOT
    documents_given_up = <<-EOT
      sum(increase(${local.promql_prefix}documents_given_up_sum{monitored_resource="cloud_run_revision"}[1h]))
    EOT
  }

  dashboard = {
    displayName = "once (${var.name_prefix})"
    mosaicLayout = {
      columns = 48
      tiles = [
        {
          xPos = 0, yPos = 0, width = 24, height = 16
          widget = {
            title = "Outcomes per second, by function, effect and outcome"
            xyChart = {
              dataSets = [{
                plotType        = "STACKED_AREA"
                legendTemplate  = "{{function}} {{effect}} {{outcome}}"
                timeSeriesQuery = { prometheusQuery = local.dashboard_queries.outcomes }
              }]
              yAxis = { label = "events/s", scale = "LINEAR" }
            }
          }
        },
        {
          xPos = 24, yPos = 0, width = 24, height = 16
          widget = {
            title = "Duplicate rate (platform redelivery), by function, last hour"
            xyChart = {
              dataSets = [{
                plotType        = "LINE"
                legendTemplate  = "{{function}}"
                timeSeriesQuery = { prometheusQuery = local.dashboard_queries.duplicate_rate }
              }]
              thresholds = [{ value = var.duplicate_share_threshold, label = "alert" }]
              yAxis      = { label = "share", scale = "LINEAR" }
            }
          }
        },
        {
          xPos = 0, yPos = 16, width = 24, height = 16
          widget = {
            title = "Latency per event (p50, p99), by function"
            xyChart = {
              dataSets = [
                {
                  plotType        = "LINE"
                  legendTemplate  = "p50 {{function}}"
                  timeSeriesQuery = { prometheusQuery = local.dashboard_queries.latency_p50, unitOverride = "ms" }
                },
                {
                  plotType        = "LINE"
                  legendTemplate  = "p99 {{function}}"
                  timeSeriesQuery = { prometheusQuery = local.dashboard_queries.latency_p99, unitOverride = "ms" }
                },
              ]
              yAxis = { label = "ms", scale = "LOG10" }
            }
          }
        },
        {
          xPos = 24, yPos = 16, width = 24, height = 16
          widget = {
            title = "Gemini spend (USD per hour, by model) and share of the day's budget"
            xyChart = {
              dataSets = [
                {
                  plotType        = "STACKED_BAR"
                  legendTemplate  = "USD/h {{model}}"
                  timeSeriesQuery = { prometheusQuery = local.dashboard_queries.spend }
                },
                {
                  plotType        = "LINE"
                  targetAxis      = "Y2"
                  legendTemplate  = "budget share"
                  timeSeriesQuery = { prometheusQuery = local.dashboard_queries.budget_share }
                },
              ]
              thresholds = [
                { value = 0.8, label = "80 % of budget", targetAxis = "Y2" },
                { value = 1.0, label = "budget", targetAxis = "Y2" },
              ]
              yAxis  = { label = "USD/h", scale = "LINEAR" }
              y2Axis = { label = "share of budget", scale = "LINEAR" }
            }
          }
        },
        {
          xPos = 0, yPos = 32, width = 24, height = 16
          widget = {
            title = "Waiting: dead letters held, oldest unacked event of each trigger"
            xyChart = {
              dataSets = [
                {
                  plotType        = "LINE"
                  legendTemplate  = "dead letters"
                  timeSeriesQuery = { prometheusQuery = local.dashboard_queries.dead_letters }
                },
                {
                  plotType        = "LINE"
                  targetAxis      = "Y2"
                  legendTemplate  = "oldest unacked (s) {{subscription_id}}"
                  timeSeriesQuery = { prometheusQuery = local.dashboard_queries.trigger_backlog, unitOverride = "s" }
                },
              ]
              thresholds = [{ value = var.unacked_age_alert_seconds, label = "backlog alert", targetAxis = "Y2" }]
              yAxis      = { label = "messages", scale = "LINEAR" }
              y2Axis     = { label = "seconds", scale = "LINEAR" }
            }
          }
        },
        {
          xPos = 24, yPos = 32, width = 24, height = 16
          widget = {
            title = "Reconciler findings per hour"
            xyChart = {
              dataSets = [
                {
                  plotType        = "LINE"
                  legendTemplate  = "completed (webhook missed)"
                  timeSeriesQuery = { prometheusQuery = local.dashboard_queries.reconciler_processed }
                },
                {
                  plotType        = "LINE"
                  legendTemplate  = "relisted"
                  timeSeriesQuery = { prometheusQuery = local.dashboard_queries.reconciler_relisted }
                },
                {
                  plotType        = "LINE"
                  legendTemplate  = "pending"
                  timeSeriesQuery = { prometheusQuery = local.dashboard_queries.reconciler_pending }
                },
                {
                  plotType        = "LINE"
                  legendTemplate  = "failed"
                  timeSeriesQuery = { prometheusQuery = local.dashboard_queries.reconciler_failed }
                },
                {
                  plotType        = "LINE"
                  legendTemplate  = "deferred resumed"
                  timeSeriesQuery = { prometheusQuery = local.dashboard_queries.reconciler_deferred_resumed }
                },
                {
                  plotType        = "LINE"
                  legendTemplate  = "too old"
                  timeSeriesQuery = { prometheusQuery = local.dashboard_queries.reconciler_too_old }
                },
              ]
              yAxis = { label = "per hour", scale = "LINEAR" }
            }
          }
        },
        {
          xPos = 0, yPos = 48, width = 24, height = 16
          widget = {
            title = "Batch jobs in flight against the cap (BATCH_MAX_JOBS_IN_FLIGHT)"
            xyChart = {
              dataSets = [
                {
                  plotType        = "LINE"
                  legendTemplate  = "jobs in flight"
                  timeSeriesQuery = { prometheusQuery = local.dashboard_queries.batch_jobs_in_flight }
                },
                {
                  plotType        = "LINE"
                  legendTemplate  = "cap"
                  timeSeriesQuery = { prometheusQuery = local.dashboard_queries.batch_max_jobs_in_flight }
                },
              ]
              yAxis = { label = "jobs", scale = "LINEAR" }
            }
          }
        },
        {
          xPos = 24, yPos = 48, width = 24, height = 16
          widget = {
            title = "Batch queue depth: documents queued, and gathered into jobs being made"
            xyChart = {
              dataSets = [
                {
                  plotType        = "STACKED_AREA"
                  legendTemplate  = "queued"
                  timeSeriesQuery = { prometheusQuery = local.dashboard_queries.batch_queued }
                },
                {
                  plotType        = "STACKED_AREA"
                  legendTemplate  = "gathered"
                  timeSeriesQuery = { prometheusQuery = local.dashboard_queries.batch_gathered }
                },
              ]
              yAxis = { label = "documents", scale = "LINEAR" }
            }
          }
        },
        {
          xPos = 0, yPos = 64, width = 24, height = 16
          widget = {
            title = "Batch: oldest queued document's wait, oldest running job's age"
            xyChart = {
              dataSets = [
                {
                  plotType        = "LINE"
                  legendTemplate  = "oldest wait (s)"
                  timeSeriesQuery = { prometheusQuery = local.dashboard_queries.batch_oldest_queued_seconds, unitOverride = "s" }
                },
                {
                  plotType        = "LINE"
                  targetAxis      = "Y2"
                  legendTemplate  = "oldest job (s)"
                  timeSeriesQuery = { prometheusQuery = local.dashboard_queries.batch_oldest_job_seconds, unitOverride = "s" }
                },
              ]
              thresholds = [
                { value = var.batch_queue_age_alert_seconds, label = "wait alert" },
                { value = var.batch_job_age_alert_seconds, label = "job alert", targetAxis = "Y2" },
              ]
              yAxis  = { label = "seconds waiting", scale = "LINEAR" }
              y2Axis = { label = "seconds running", scale = "LINEAR" }
            }
          }
        },
        {
          xPos = 24, yPos = 64, width = 24, height = 16
          widget = {
            title = "Documents completed per hour, and given up"
            xyChart = {
              dataSets = [
                {
                  plotType        = "STACKED_BAR"
                  legendTemplate  = "completed"
                  timeSeriesQuery = { prometheusQuery = local.dashboard_queries.documents_finished }
                },
                {
                  plotType        = "LINE"
                  legendTemplate  = "given up"
                  timeSeriesQuery = { prometheusQuery = local.dashboard_queries.documents_given_up }
                },
              ]
              yAxis = { label = "per hour", scale = "LINEAR" }
            }
          }
        },
      ]
    }
  }
}

resource "google_monitoring_dashboard" "once" {
  project        = var.project_id
  dashboard_json = jsonencode(local.dashboard)

  depends_on = [
    google_logging_metric.outcomes,
    google_logging_metric.latency,
    google_logging_metric.gemini_spend,
    google_logging_metric.budget_share,
    google_logging_metric.reconciler,
    google_logging_metric.batch,
    google_logging_metric.documents_finished,
    google_logging_metric.documents_given_up,
  ]
}
