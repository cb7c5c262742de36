# Results flow from the completion flows to MessageDelivered; the dead-letter topic holds what cannot be delivered.

resource "google_pubsub_topic" "results" {
  name    = "${var.name_prefix}-results"
  project = var.project_id
  labels  = local.labels

  depends_on = [google_project_service.apis]
}

resource "google_pubsub_topic" "dead_letter" {
  name    = "${var.name_prefix}-dead-letter"
  project = var.project_id
  labels  = local.labels

  depends_on = [google_project_service.apis]
}

# A topic without a subscription drops what is published to it. This pull subscription is where dead letters wait
# for an operator: a week of retention, and no expiry (the default expiry deletes a subscription after 31 idle
# days, and a healthy dead-letter subscription is idle).
resource "google_pubsub_subscription" "dead_letter_hold" {
  name    = "${var.name_prefix}-dead-letter-hold"
  project = var.project_id
  topic   = google_pubsub_topic.dead_letter.id
  labels  = local.labels

  ack_deadline_seconds       = 60
  message_retention_duration = "604800s"

  expiration_policy {
    ttl = ""
  }
}

# Dead-lettering has two writers, and each needs to publish to the dead-letter topic:
# 1. MessageDelivered itself (DEAD_LETTER_TOPIC): a poison message is recorded as rejected, copied there, acked.
# 2. Pub/Sub, once the Eventarc subscription of a trigger is given a dead-letter policy (README: the provider
#    cannot configure the subscription Eventarc creates, terraform-provider-google#25069). Pub/Sub forwards as its
#    service agent, which therefore needs publisher here (and subscriber on that subscription, granted by the
#    same README command).
resource "google_pubsub_topic_iam_member" "dead_letter_from_message_delivered" {
  project = var.project_id
  topic   = google_pubsub_topic.dead_letter.name
  role    = "roles/pubsub.publisher"
  member  = google_service_account.function["message_delivered"].member
}

resource "google_pubsub_topic_iam_member" "dead_letter_from_pubsub_agent" {
  project = var.project_id
  topic   = google_pubsub_topic.dead_letter.name
  role    = "roles/pubsub.publisher"
  member  = "serviceAccount:${google_project_service_identity.pubsub.email}"
}

# Every flow that completes an analysis publishes its result.
resource "google_pubsub_topic_iam_member" "results_publishers" {
  for_each = toset(["document_uploaded", "gemini_webhook", "gemini_reconciler"])

  project = var.project_id
  topic   = google_pubsub_topic.results.name
  role    = "roles/pubsub.publisher"
  member  = google_service_account.function[each.key].member
}
