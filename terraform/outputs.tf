# Names and URLs only: no output carries a secret (the secrets' values are never in Terraform at all).

output "webhook_url" {
  description = "The webhook's URL. Dynamic webhooks (the default) need nothing done with it; static ones register it with `once webhook register` (docs/OPERATIONS.md: static webhooks)."
  value       = google_cloudfunctions2_function.gemini_webhook.service_config[0].uri
}

output "inbox_bucket" {
  description = "Upload documents here; each new object generation is analysed once."
  value       = google_storage_bucket.inbox.name
}

output "results_topic" {
  description = "Topic every analysis result is published to (attribute idempotency_key on every message)."
  value       = google_pubsub_topic.results.id
}

output "dead_letter_topic" {
  description = "Topic for messages that can never be delivered."
  value       = google_pubsub_topic.dead_letter.id
}

output "dead_letter_subscription" {
  description = "Pull subscription holding dead letters for inspection."
  value       = google_pubsub_subscription.dead_letter_hold.id
}

output "triggers" {
  description = "Eventarc triggers of DocumentUploaded, MessageDelivered and BatchCompleted; a dead-lettered event is re-driven through its trigger's topic (docs/OPERATIONS.md: dead letters)."
  value = {
    document_uploaded = google_cloudfunctions2_function.document_uploaded.event_trigger[0].trigger
    message_delivered = google_cloudfunctions2_function.message_delivered.event_trigger[0].trigger
    batch_completed   = google_cloudfunctions2_function.batch_completed.event_trigger[0].trigger
  }
}

output "dashboard" {
  description = "The Cloud Monitoring dashboard (console: Monitoring, Dashboards)."
  value       = google_monitoring_dashboard.once.id
}

output "gemini_api_key_secret" {
  description = "Secret Manager secret to add the Gemini API key to (gcloud secrets versions add)."
  value       = google_secret_manager_secret.gemini_api_key.secret_id
}

output "gemini_webhook_secret" {
  description = "Secret Manager secret to add the webhook's whsec_ signing secret(s) to."
  value       = google_secret_manager_secret.gemini_webhook_secret.secret_id
}

output "notify_signing_secret" {
  description = "Secret Manager secret holding the whsec_ secret(s) that sign every notification: the receiver verifies with it."
  value       = google_secret_manager_secret.notify_signing_secret.secret_id
}

output "results_signing_key" {
  description = "Secret Manager secret holding the whsec_ key(s) that sign every published result (for the pipeline alone)."
  value       = google_secret_manager_secret.results_signing_key.secret_id
}
