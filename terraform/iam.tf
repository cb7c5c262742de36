# Identities. One service account per function, so a function can do only what its own flow needs; one for the
# Eventarc triggers, one for the scheduler, one for the builds. Grants sit on the narrowest resource the API
# allows: topic, secret, bucket, Cloud Run service; project-wide only where no narrower scope exists.
#
# | identity          | role                                   | on                      | why                                  |
# |-------------------|----------------------------------------|-------------------------|--------------------------------------|
# | document_uploaded | datastore.user                         | project                 | ledger, analyses, billing            |
# |                   | storage.objectViewer                   | inbox bucket            | read the uploaded generation         |
# |                   | pubsub.publisher                       | results topic           | publish the result (pubsub.tf)       |
# |                   | secretmanager.secretAccessor           | gemini api key, results | call Gemini, sign results            |
# |                   |                                        | key                     | (secrets.tf)                         |
# | message_delivered | datastore.user                         | project                 | ledger                               |
# |                   | secretmanager.secretAccessor           | notify secret, results  | sign notifications, check results    |
# |                   |                                        | key                     | are the pipeline's                   |
# |                   | pubsub.publisher                       | dead-letter topic       | dead-letter poison messages          |
# | gemini_webhook    | datastore.viewer                       | project                 | one ledger read per delivery (public:|
# |                   |                                        |                         | it writes nothing, has no Gemini key)|
# |                   | secretmanager.secretAccessor           | webhook secret          | verify static webhooks' signatures   |
# |                   | pubsub.publisher                       | batch completions topic | hand finished jobs to BatchCompleted |
# | batch_completed   | datastore.user                         | project                 | ledger, analyses, billing            |
# |                   | secretmanager.secretAccessor           | api key, results key    | fetch the job, sign its results      |
# |                   | pubsub.publisher                       | results topic           | publish the result                   |
# | gemini_reconciler | datastore.user                         | project                 | ledger, analyses, billing            |
# |                   | storage.objectViewer                   | inbox bucket            | read a deferred document to resume it|
# |                   | secretmanager.secretAccessor           | api key, results key    | list batch jobs, sign results        |
# |                   | pubsub.publisher                       | results topic           | publish the result                   |
# | trigger           | run.invoker                            | the event functions     | Eventarc pushes events with its token|
# |                   | eventarc.eventReceiver                 | project                 | receive Cloud Storage direct events  |
# | scheduler         | run.invoker                            | reconciler only         | Cloud Scheduler's OIDC token         |
# | build             | logging.logWriter                      | project                 | build logs                           |
# |                   | artifactregistry.writer                | functions repository    | push the built image                 |
# |                   | storage.objectAdmin                    | project, conditioned to | source copy in gcf-v2-sources-*;     |
# |                   |                                        | the sources buckets     | never the inbox or the state bucket  |
# | GCS agent         | pubsub.publisher                       | project                 | Eventarc storage notifications (see  |
# |                   |                                        |                         | agents.tf: why not narrower)         |
# | Eventarc agent    | eventarc.serviceAgent                  | project                 | create and run the triggers          |
# | Pub/Sub agent     | iam.serviceAccountTokenCreator         | trigger account         | sign push tokens as the trigger      |
# |                   | pubsub.publisher                       | dead-letter topic       | forward undeliverable events         |
# |                   | pubsub.subscriber                      | each trigger's subscr.  | ack what it dead-letters (pubsub.tf) |
#
# The service agents (Google-managed identities) are created and granted in agents.tf.
#
# Firestore has no per-collection IAM: datastore.user on the project is the narrowest role that reads and writes
# documents (it cannot change indexes, rules or the database), datastore.viewer the narrowest that reads them. Each
# function gets the one its code needs (dev.once.functions.FunctionNeeds; terraform/check's PrivilegeCheck compares).

locals {
  functions = {
    document_uploaded = "DocumentUploaded: analyses uploaded documents with Gemini"
    message_delivered = "MessageDelivered: notifies once per published result"
    gemini_webhook    = "GeminiWebhook: receives Gemini batch completion webhooks"
    batch_completed   = "BatchCompleted: completes each finished batch job once"
    gemini_reconciler = "GeminiReconciler: polls Gemini batch jobs (safety net for lost webhooks)"
  }
}

resource "google_service_account" "function" {
  for_each = local.functions

  project      = var.project_id
  account_id   = "${var.name_prefix}-${replace(each.key, "_", "-")}"
  display_name = "once ${each.key}"
  description  = each.value

  depends_on = [google_project_service.apis]
}

locals {
  # The public webhook only reads (one ledger record a delivery); the others claim, complete and record.
  firestore_roles = {
    document_uploaded = "roles/datastore.user"
    message_delivered = "roles/datastore.user"
    gemini_webhook    = "roles/datastore.viewer"
    batch_completed   = "roles/datastore.user"
    gemini_reconciler = "roles/datastore.user"
  }
}

resource "google_project_iam_member" "function_firestore" {
  for_each = local.functions

  project = var.project_id
  role    = local.firestore_roles[each.key]
  member  = google_service_account.function[each.key].member
}

resource "google_storage_bucket_iam_member" "document_reader" {
  bucket = google_storage_bucket.inbox.name
  role   = "roles/storage.objectViewer"
  member = google_service_account.function["document_uploaded"].member
}

# The reconciler resumes documents deferred for want of budget: it reads them as DocumentUploaded does.
resource "google_storage_bucket_iam_member" "deferred_document_reader" {
  bucket = google_storage_bucket.inbox.name
  role   = "roles/storage.objectViewer"
  member = google_service_account.function["gemini_reconciler"].member
}

# Eventarc delivers to the three event functions with this account's identity token.
resource "google_service_account" "trigger" {
  project      = var.project_id
  account_id   = "${var.name_prefix}-trigger"
  display_name = "once Eventarc triggers"
  description  = "Identity Eventarc uses to push storage and Pub/Sub events to DocumentUploaded, MessageDelivered and BatchCompleted"

  depends_on = [google_project_service.apis]
}

resource "google_project_iam_member" "trigger_event_receiver" {
  project = var.project_id
  role    = "roles/eventarc.eventReceiver"
  member  = google_service_account.trigger.member
}

resource "google_cloud_run_service_iam_member" "trigger_invokes_document_uploaded" {
  project  = var.project_id
  location = var.region
  service  = google_cloudfunctions2_function.document_uploaded.name
  role     = "roles/run.invoker"
  member   = google_service_account.trigger.member
}

resource "google_cloud_run_service_iam_member" "trigger_invokes_message_delivered" {
  project  = var.project_id
  location = var.region
  service  = google_cloudfunctions2_function.message_delivered.name
  role     = "roles/run.invoker"
  member   = google_service_account.trigger.member
}

resource "google_cloud_run_service_iam_member" "trigger_invokes_batch_completed" {
  project  = var.project_id
  location = var.region
  service  = google_cloudfunctions2_function.batch_completed.name
  role     = "roles/run.invoker"
  member   = google_service_account.trigger.member
}

# Cloud Scheduler calls the reconciler with an OIDC token of this account, and nothing else may call it.
resource "google_service_account" "scheduler" {
  project      = var.project_id
  account_id   = "${var.name_prefix}-scheduler"
  display_name = "once reconciler schedule"
  description  = "Identity Cloud Scheduler uses to call GeminiReconciler"

  depends_on = [google_project_service.apis]
}

resource "google_cloud_run_service_iam_member" "scheduler_invokes_reconciler" {
  project  = var.project_id
  location = var.region
  service  = google_cloudfunctions2_function.gemini_reconciler.name
  role     = "roles/run.invoker"
  member   = google_service_account.scheduler.member
}

# The webhook is the one public function: Gemini cannot present a Google identity token, so the function
# authenticates every delivery itself (a static webhook's HMAC signature with GEMINI_WEBHOOK_SECRET, a dynamic one's
# token signed with Google's keys for this URL; 401 otherwise).
resource "google_cloud_run_service_iam_member" "webhook_public" {
  project  = var.project_id
  location = var.region
  service  = google_cloudfunctions2_function.gemini_webhook.name
  role     = "roles/run.invoker"
  member   = "allUsers"
}

# Builds run as this account instead of a project default (new projects' default build identity may lack the
# rights, and an organisation may forbid default grants). The roles are those Google documents for a build
# account. storage.objectAdmin is granted on the project because the buckets Cloud Functions copies the source into
# (gcf-v2-sources-NUMBER-REGION, gcf-v2-uploads-NUMBER-REGION) are created by the platform, not here, but conditioned
# to those and to the sources bucket: the build cannot rewrite the inbox, nor a Terraform state bucket in the project.
resource "google_service_account" "build" {
  project      = var.project_id
  account_id   = "${var.name_prefix}-build"
  display_name = "once function builds"
  description  = "Identity Cloud Build uses to turn the prebuilt jar into the functions' images"

  depends_on = [google_project_service.apis]
}

resource "google_project_iam_member" "build" {
  project = var.project_id
  role    = "roles/logging.logWriter"
  member  = google_service_account.build.member
}

# The platform's buckets are named by the project's number.
data "google_project" "build" {
  project_id = var.project_id

  depends_on = [google_project_service.apis]
}

locals {
  build_buckets = [
    google_storage_bucket.sources.name,
    "gcf-v2-sources-${data.google_project.build.number}-${var.region}",
    "gcf-v2-uploads-${data.google_project.build.number}-${var.region}",
  ]
}

resource "google_project_iam_member" "build_sources" {
  project = var.project_id
  role    = "roles/storage.objectAdmin"
  member  = google_service_account.build.member

  condition {
    title       = "function sources only"
    description = "The buckets a function build reads and writes: this configuration's sources and the platform's gcf-v2-* copies."
    expression = join(" || ", [for bucket in local.build_buckets :
    "resource.name == \"projects/_/buckets/${bucket}\" || resource.name.startsWith(\"projects/_/buckets/${bucket}/\")"])
  }
}

resource "google_artifact_registry_repository_iam_member" "build_writer" {
  project    = var.project_id
  location   = google_artifact_registry_repository.functions.location
  repository = google_artifact_registry_repository.functions.name
  role       = "roles/artifactregistry.writer"
  member     = google_service_account.build.member
}
