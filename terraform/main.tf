# Shared names and the APIs everything else needs.

locals {
  # The ledger collection the code uses when ONCE_COLLECTION is left at its default
  # (dev.once.config.Setting.ONCE_COLLECTION). Terraform sets ONCE_COLLECTION to this value and puts the TTL
  # policy on this collection, so the two cannot drift apart; the offline check compares it with the code.
  ledger_collection = "idempotency"

  labels = merge(var.labels, { app = "once" })

  firestore_location = coalesce(var.firestore_location, var.region)
  # GEMINI_DAILY_BUDGET_USD: blank means no cap (the code treats a blank setting as unset).
  gemini_daily_budget = var.gemini_daily_budget_usd == null ? "" : tostring(var.gemini_daily_budget_usd)
  # Blank: the analyses and bills are kept (RECORDS_RETENTION_DAYS).
  records_retention = var.records_retention_days == null ? "" : tostring(var.records_retention_days)
  inbox_bucket       = "${var.project_id}-${var.name_prefix}-inbox"
  sources_bucket     = "${var.project_id}-${var.name_prefix}-sources"

  # Execution timeouts, one place. A claim's lease does not have to exceed them: its holder renews it while it works,
  # and checks, before a paid call or a publish, that the lease outlasts that call.
  timeout_seconds = {
    # Event functions may run at most 540 s. A synchronous generateContent on a large document can take minutes.
    document_uploaded = 540
    # A Firestore claim, one HTTP notify with its own client timeout, a completion write.
    message_delivered = 120
    # A delivery is a signature check, one ledger read and one publish (the hand-off to BatchCompleted): well under
    # a second. The bound is kept above gemini_timeout_seconds, which the webhook still reads at start.
    gemini_webhook = 180
    # A completion asks Gemini for the job (bounded by gemini_timeout_seconds), reads its answers, writes and
    # publishes per document: minutes for a large job. The most an event function may run.
    batch_completed = 540
    # Lists batch jobs and completes each finished one; bounded below the schedule interval.
    gemini_reconciler = 540
  }
}

resource "google_project_service" "apis" {
  for_each = toset([
    "artifactregistry.googleapis.com",
    "billingbudgets.googleapis.com", # only used when billing_account is set (observability.tf)
    "cloudbuild.googleapis.com",
    "cloudfunctions.googleapis.com",
    "cloudresourcemanager.googleapis.com", # project IAM and lookups; off by default in some new projects
    "cloudscheduler.googleapis.com",
    "eventarc.googleapis.com",
    "firebaserules.googleapis.com",
    "firestore.googleapis.com",
    "iam.googleapis.com",
    "logging.googleapis.com",
    "monitoring.googleapis.com",
    "pubsub.googleapis.com",
    "run.googleapis.com",
    "secretmanager.googleapis.com",
    "storage.googleapis.com",
  ])

  project = var.project_id
  service = each.value
  # Other workloads in the project may use these APIs too: destroying this deployment must not turn them off.
  disable_on_destroy = false
}
