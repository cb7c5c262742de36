# The secrets exist here; their values never do (four: the Gemini API key, the static webhook's secret, the secret that
# signs notifications, the key that signs results). Terraform state holds no secret version: values are added with
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

resource "google_secret_manager_secret" "notify_signing_secret" {
  project   = var.project_id
  secret_id = "${var.name_prefix}-notify-signing-secret"
  labels    = local.labels

  replication {
    auto {}
  }

  depends_on = [google_project_service.apis]
}

resource "google_secret_manager_secret" "results_signing_key" {
  project   = var.project_id
  secret_id = "${var.name_prefix}-results-signing-key"
  labels    = local.labels

  replication {
    auto {}
  }

  depends_on = [google_project_service.apis]
}

# Access per secret, not per project: each function reads only the secrets it uses (the public webhook: its own only).
resource "google_secret_manager_secret_iam_member" "gemini_api_key" {
  for_each = toset(["document_uploaded", "batch_completed", "gemini_reconciler"])

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

# Signs every notification as Standard Webhooks: MessageDelivered alone.
resource "google_secret_manager_secret_iam_member" "notify_signing_secret" {
  project   = var.project_id
  secret_id = google_secret_manager_secret.notify_signing_secret.secret_id
  role      = "roles/secretmanager.secretAccessor"
  member    = google_service_account.function["message_delivered"].member
}

# Signs every published result (the three that publish) and proves it to MessageDelivered: what no other publisher
# to the results topic (the Cloud Storage agent, a mis-set bucket notification) has.
resource "google_secret_manager_secret_iam_member" "results_signing_key" {
  for_each = toset(["document_uploaded", "batch_completed", "gemini_reconciler", "message_delivered"])

  project   = var.project_id
  secret_id = google_secret_manager_secret.results_signing_key.secret_id
  role      = "roles/secretmanager.secretAccessor"
  member    = google_service_account.function[each.key].member
}
