# Google's service agents the triggers rely on, created and granted here so that the apply works on a fresh project
# (the one after the secrets' targeted apply, docs/DEPLOY.md: first deploy). A service agent normally appears some
# time after its API is enabled; a trigger created before its agent exists, or before the agent's roles have
# propagated, fails with "Permission denied while using the Eventarc Service Agent"
# (hashicorp/terraform-provider-google#25294, open; #14584). So: create each agent explicitly, grant its roles, then
# wait (time_sleep) before any trigger is created.
#
# | agent      | created by                                   | roles here                                         |
# |------------|----------------------------------------------|----------------------------------------------------|
# | Eventarc   | google_project_service_identity (beta)       | eventarc.serviceAgent on the project               |
# | Pub/Sub    | google_project_service_identity (beta)       | token creator on the trigger account, dead letters |
# | Storage    | data google_storage_project_service_account  | pubsub.publisher on the project but our own topics |
#
# Cloud Storage's agent is not made with google_project_service_identity, which does not support
# storage.googleapis.com (terraform-google-modules/terraform-google-project-factory#803): Storage's own
# projects.serviceAccount.get, which the data source calls, creates it on first use.

resource "google_project_service_identity" "eventarc" {
  provider = google-beta

  project = var.project_id
  service = "eventarc.googleapis.com"

  depends_on = [google_project_service.apis]
}

# Granted automatically when the agent appears on its own; granted here because this configuration may be what
# makes it appear.
resource "google_project_iam_member" "eventarc_agent" {
  project = var.project_id
  role    = "roles/eventarc.serviceAgent"
  member  = "serviceAccount:${google_project_service_identity.eventarc.email}"
}

# The Pub/Sub service agent: it mints the trigger account's tokens for push deliveries (needed in projects created
# before April 2021, harmless after) and forwards dead letters (pubsub.tf).
resource "google_project_service_identity" "pubsub" {
  provider = google-beta

  project = var.project_id
  service = "pubsub.googleapis.com"

  depends_on = [google_project_service.apis]
}

resource "google_service_account_iam_member" "pubsub_agent_signs_as_trigger" {
  service_account_id = google_service_account.trigger.name
  role               = "roles/iam.serviceAccountTokenCreator"
  member             = "serviceAccount:${google_project_service_identity.pubsub.email}"
}

# Cloud Storage publishes object notifications for the storage trigger as its service agent, to a topic Eventarc names
# and makes when the trigger is created (eventarc-REGION-TRIGGER-NNN): so the grant cannot be on that topic, and
# Eventarc asks for it on the project. A plain project grant would let anyone who can point any bucket's notifications
# at a topic here publish, as the agent, to our own topics: forged results on the results topic, forged hand-offs on
# the batch completions topic, noise on the dead letters. So the grant is conditioned to every topic but ours:
# - not on resource.name: Pub/Sub is not among the services that evaluate resource attributes in conditions (Google's
#   "Resource attributes for IAM Conditions" lists Pub/Sub Lite, not Pub/Sub), so a name condition never holds there;
# - on a tag instead, which every service evaluates: our topics carry the tag value below (a binding on each, made
#   after the topic, so upgrading replaces no topic), and the grant holds where a topic does not carry it. Eventarc's
#   topic, untagged, receives the events; ours refuse the agent whoever configured the notification.
# Not a deny policy: that needs iam.denyAdmin, which a project Owner does not have, and it would still need the tag to
# spare Eventarc's topic. The code refuses a forgery as well: MessageDelivered notifies only results signed with
# RESULTS_SIGNING_KEY, and a document is read from the inbox by the generation its event names.
# terraform/check's PrivilegeCheck fails when a topic here lacks the tag or the grant loses its condition.
data "google_storage_project_service_account" "gcs" {
  project = var.project_id

  depends_on = [google_project_service.apis]
}

# A tag key of the project (whoever applies needs roles/resourcemanager.tagAdmin and tagUser there: docs/DEPLOY.md).
resource "google_tags_tag_key" "storage_agent" {
  parent      = "projects/${var.project_id}"
  short_name  = "${var.name_prefix}-storage-agent"
  description = "Topics of the once deployment ${var.name_prefix}: the Cloud Storage service agent may not publish to them."

  depends_on = [google_project_service.apis]
}

resource "google_tags_tag_value" "storage_agent_refused" {
  parent      = google_tags_tag_key.storage_agent.id
  short_name  = "refused"
  description = "The Cloud Storage service agent's publisher grant does not hold on this topic."
}

# Every topic of ours. A new topic goes here too (PrivilegeCheck names one that does not).
resource "google_tags_tag_binding" "topic_refuses_storage_agent" {
  for_each = {
    results           = google_pubsub_topic.results.name
    batch_completions = google_pubsub_topic.batch_completions.name
    dead_letter       = google_pubsub_topic.dead_letter.name
  }

  parent    = "//pubsub.googleapis.com/projects/${var.project_id}/topics/${each.value}"
  tag_value = google_tags_tag_value.storage_agent_refused.id
}

resource "google_project_iam_member" "gcs_agent_publishes_events" {
  project = var.project_id
  role    = "roles/pubsub.publisher"
  member  = "serviceAccount:${data.google_storage_project_service_account.gcs.email_address}"

  condition {
    title       = "not-${var.name_prefix}-topics"
    description = "Eventarc's storage event topics; not the topics tagged ${var.name_prefix}-storage-agent=refused."
    expression  = "!resource.matchTagId('${google_tags_tag_key.storage_agent.id}', '${google_tags_tag_value.storage_agent_refused.id}')"
  }

  # The conditional member is a new binding: add it before removing the unconditional one of an older apply, so the
  # agent is never without a grant while events arrive. Granted after the tags are on our topics.
  lifecycle {
    create_before_destroy = true
  }
  depends_on = [google_tags_tag_binding.topic_refuses_storage_agent]
}

# IAM changes take effect within about a minute, and up to seven for a new principal; the triggers wait for them.
# The sleep happens once (on create) and again only if an agent's grant is replaced.
resource "time_sleep" "agents_ready" {
  create_duration = "90s"

  triggers = {
    eventarc = google_project_iam_member.eventarc_agent.id
    pubsub   = google_service_account_iam_member.pubsub_agent_signs_as_trigger.id
    storage  = google_project_iam_member.gcs_agent_publishes_events.id
  }
}
