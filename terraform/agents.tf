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
# | Storage    | data google_storage_project_service_account  | pubsub.publisher on the project                    |
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

# Cloud Storage publishes object notifications for the storage trigger as its service agent. On the project, as Eventarc
# requires for direct Cloud Storage events: the transport topic is Eventarc's, named and made when the trigger is
# created, which needs this grant first; and Pub/Sub evaluates no resource conditions that could narrow it. What it
# would let the agent (or whoever can point a bucket notification at a topic here) do to this pipeline is closed in
# the code instead: MessageDelivered notifies only results signed with RESULTS_SIGNING_KEY, which the agent cannot
# have, and a document is read from the inbox by the generation its event names.
data "google_storage_project_service_account" "gcs" {
  project = var.project_id

  depends_on = [google_project_service.apis]
}

resource "google_project_iam_member" "gcs_agent_publishes_events" {
  project = var.project_id
  role    = "roles/pubsub.publisher"
  member  = "serviceAccount:${data.google_storage_project_service_account.gcs.email_address}"
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
