# The secrets exist here; their values never do. Terraform state holds no secret version: values are added with
# `gcloud secrets versions add` (docs/DEPLOY.md: first deploy), so neither variables, state nor outputs ever carry them.

resource "google_secret_manager_secret" "gemini_api_key" {
  project   = var.project_id
  secret_id = "${var.name_prefix}-gemini-api-key"
  labels    = local.labels

  replication {
    auto {}
  }

  depends_on = [google_project_service.apis]
}

resource "google_secret_manager_secret" "gemini_webhook_secret" {
  project   = var.project_id
  secret_id = "${var.name_prefix}-gemini-webhook-secret"
  labels    = local.labels

  replication {
    auto {}
  }

  depends_on = [google_project_service.apis]
}

# Access per secret, not per project: each function reads only the secrets it uses.
resource "google_secret_manager_secret_iam_member" "gemini_api_key" {
  for_each = toset(["document_uploaded", "gemini_webhook", "batch_completed", "gemini_reconciler"])

  project   = var.project_id
  secret_id = google_secret_manager_secret.gemini_api_key.secret_id
  role      = "roles/secretmanager.secretAccessor"
  member    = google_service_account.function[each.key].member
}

resource "google_secret_manager_secret_iam_member" "gemini_webhook_secret" {
  project   = var.project_id
  secret_id = google_secret_manager_secret.gemini_webhook_secret.secret_id
  role      = "roles/secretmanager.secretAccessor"
  member    = google_service_account.function["gemini_webhook"].member
}
