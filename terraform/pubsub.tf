# Results flow from the completion flows to MessageDelivered; the dead-letter topic holds what cannot be delivered.
# Finished batch jobs flow from GeminiWebhook to BatchCompleted: the webhook answers Gemini within seconds and the
# completion, which may take minutes, runs under its own trigger's retries.

resource "google_pubsub_topic" "results" {
  name    = "${var.name_prefix}-results"
  project = var.project_id
  labels  = local.labels

  depends_on = [google_project_service.apis]
}

resource "google_pubsub_topic" "batch_completions" {
  name    = "${var.name_prefix}-batch-completions"
  project = var.project_id
  labels  = local.labels

  depends_on = [google_project_service.apis]
}

# The webhook hands each finished job off here (BATCH_COMPLETIONS_TOPIC).
resource "google_pubsub_topic_iam_member" "batch_completions_from_webhook" {
  project = var.project_id
  topic   = google_pubsub_topic.batch_completions.name
  role    = "roles/pubsub.publisher"
  member  = google_service_account.function["gemini_webhook"].member
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
# 2. Pub/Sub, for an event a trigger failed to deliver max_delivery_attempts times (trigger_dead_letter below).
#    Pub/Sub forwards as its service agent, which therefore needs publisher here and subscriber on each trigger's
#    subscription (to acknowledge what it forwarded).
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

# Eventarc retries a failing event for as long as its subscription retains it (24 hours) and then drops it. The
# subscription is Eventarc's, created with the trigger, and neither google_cloudfunctions2_function nor
# google_eventarc_trigger can configure it (hashicorp/terraform-provider-google#25069, #17697, both open). So the
# deployment configures it itself, with gcloud, the workaround given there: after each trigger is created (again
# whenever it is re-created, the topic changes or the attempts change), it looks up the trigger's subscription,
# lets the Pub/Sub agent acknowledge on it, and sets the dead-letter policy and an explicit 10-600 s backoff (the
# figures max_delivery_attempts is reasoned with). Needs gcloud on the machine that applies (docs/DEPLOY.md: prerequisites).
resource "terraform_data" "trigger_dead_letter" {
  for_each = {
    document_uploaded = google_cloudfunctions2_function.document_uploaded.event_trigger[0].trigger
    message_delivered = google_cloudfunctions2_function.message_delivered.event_trigger[0].trigger
    batch_completed   = google_cloudfunctions2_function.batch_completed.event_trigger[0].trigger
  }

  triggers_replace = [each.value, google_pubsub_topic.dead_letter.id, var.max_delivery_attempts]

  provisioner "local-exec" {
    interpreter = ["/bin/bash", "-c"]
    command     = <<-EOT
      set -euo pipefail
      sub=$(gcloud eventarc triggers describe "$${TRIGGER##*/}" --project="$PROJECT" --location="$REGION" \
              --format='value(transport.pubsub.subscription)')
      test -n "$sub" || { echo "trigger $TRIGGER has no Pub/Sub subscription" >&2; exit 1; }
      gcloud pubsub subscriptions add-iam-policy-binding "$sub" --project="$PROJECT" \
        --role=roles/pubsub.subscriber --member="serviceAccount:$PUBSUB_AGENT" --quiet >/dev/null
      gcloud pubsub subscriptions update "$sub" --project="$PROJECT" \
        --dead-letter-topic="$DEAD_LETTER_TOPIC" --max-delivery-attempts="$ATTEMPTS" \
        --min-retry-delay=10s --max-retry-delay=600s
    EOT
    environment = {
      TRIGGER           = each.value
      PROJECT           = var.project_id
      REGION            = var.region
      PUBSUB_AGENT      = google_project_service_identity.pubsub.email
      DEAD_LETTER_TOPIC = google_pubsub_topic.dead_letter.id
      ATTEMPTS          = tostring(var.max_delivery_attempts)
    }
  }

  depends_on = [google_pubsub_topic_iam_member.dead_letter_from_pubsub_agent]
}

# Every flow that completes an analysis publishes its result (the webhook hands its jobs to BatchCompleted).
resource "google_pubsub_topic_iam_member" "results_publishers" {
  for_each = toset(["document_uploaded", "batch_completed", "gemini_reconciler"])

  project = var.project_id
  topic   = google_pubsub_topic.results.name
  role    = "roles/pubsub.publisher"
  member  = google_service_account.function[each.key].member
}
