# The reconciler is the safety net for lost webhooks: Cloud Scheduler calls it with an OIDC token of its own
# account, which is the only identity allowed to invoke it (iam.tf).
resource "google_cloud_scheduler_job" "reconcile" {
  name        = "${var.name_prefix}-gemini-reconcile"
  project     = var.project_id
  region      = var.region
  description = "Calls GeminiReconciler to complete Gemini batch jobs whose webhook never arrived."
  schedule    = var.reconcile_schedule
  time_zone   = var.reconcile_time_zone
  # Wait as long as the reconciler may run, so a long run is not reported as failed.
  attempt_deadline = "${local.timeout_seconds.gemini_reconciler + 30}s"

  # The next scheduled run is the retry: every run re-reads all unfinished jobs.
  retry_config {
    retry_count = 0
  }

  http_target {
    http_method = "POST"
    uri         = google_cloudfunctions2_function.gemini_reconciler.service_config[0].uri

    oidc_token {
      service_account_email = google_service_account.scheduler.email
      audience              = google_cloudfunctions2_function.gemini_reconciler.service_config[0].uri
    }
  }

  depends_on = [google_cloud_run_service_iam_member.scheduler_invokes_reconciler]
}
