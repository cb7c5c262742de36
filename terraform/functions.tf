# The five functions. One jar for all five (they share the library and its clients; a jar per function would save little).
# Entry points, runtime and environment are literal here so the offline check (terraform/check) can compare them
# with the code: each entry point must be a class of the right kind, every setting the code reads must be set here
# (or be one of the few local-only ones), and nothing may be set that the code does not read; nor may a function get
# a setting, a secret or a role beyond what its own code uses (dev.once.functions.FunctionNeeds, terraform/check PrivilegeCheck).
#
# Who reads what (besides GOOGLE_CLOUD_PROJECT and the ledger settings ONCE_*, which every function reads):
#   DocumentUploaded   Storage, Gemini (GEMINI_API_KEY, GEMINI_MODEL, ANALYSIS_MODE, GEMINI_WEBHOOK_URL), RESULTS_TOPIC
#                      and RESULTS_SIGNING_KEY, the budget
#   MessageDelivered   NOTIFY_URL, NOTIFY_SIGNING_SECRET, RESULTS_SIGNING_KEY (it notifies signed results only),
#                      DEAD_LETTER_TOPIC
#   GeminiWebhook      its two configurations (GEMINI_WEBHOOK_SECRET; GEMINI_WEBHOOK_URL, _JWKS_URL, _ISSUER) and
#                      BATCH_COMPLETIONS_TOPIC (its hand-off to BatchCompleted), nothing else: the public function has
#                      no Gemini key and only reads Firestore
#   BatchCompleted     Gemini (GEMINI_API_KEY, GEMINI_MODEL), RESULTS_TOPIC and RESULTS_SIGNING_KEY
#   GeminiReconciler   Gemini (GEMINI_API_KEY, GEMINI_MODEL), RESULTS_TOPIC, the budget, and DocumentUploaded's
#                      analysis settings and Storage: it resumes documents deferred for want of budget
# Deliberately never set here: FIRESTORE_EMULATOR_HOST, PUBSUB_EMULATOR_HOST, STORAGE_EMULATOR_HOST and
# GEMINI_BASE_URL, which point the clients at local stand-ins.
#
# Sizing. Every function gets one vCPU, the minimum for more than one request per instance, and enough memory for
# a JVM that loads the Google clients (JVM heap defaults to a quarter of it). Instances scale to zero except the
# webhook (webhook_min_instances). All retries are the platform's: event functions throw to be redelivered.

# Gemini webhooks (docs/DEPLOY.md: "Gemini webhooks"). The webhook always accepts both of Google's configurations: static
# deliveries (a registered webhook, signed with GEMINI_WEBHOOK_SECRET) and dynamic ones (sent to the URL a batch job
# names, signed with Google's keys, each token made for that URL). var.gemini_webhooks chooses which one new batch
# jobs use: "dynamic" makes DocumentUploaded name the webhook's URL in each job, so nothing needs registering.
# The URL is the function's deterministic cloudfunctions.net URL, https://REGION-PROJECT_ID.cloudfunctions.net/NAME
# (Cloud Functions docs, "HTTP triggers", function URLs: 2nd gen functions have it beside the run.app one), built
# from variables: the webhook cannot read its own resource's url, and DocumentUploaded's environment then does not
# wait on the webhook. A postcondition compares it with the url the API reports.
locals {
  webhook_function_name = "${var.name_prefix}-gemini-webhook"
  webhook_url           = "https://${var.region}-${var.project_id}.cloudfunctions.net/${local.webhook_function_name}"
}

resource "google_cloudfunctions2_function" "document_uploaded" {
  name        = "${var.name_prefix}-document-uploaded"
  project     = var.project_id
  location    = var.region
  description = "Analyses each uploaded document generation once with Gemini, bills it and publishes the result."
  labels      = local.labels

  build_config {
    runtime           = "java21"
    entry_point       = "dev.once.functions.DocumentUploaded"
    service_account   = google_service_account.build.id
    docker_repository = google_artifact_registry_repository.functions.id
    source {
      storage_source {
        bucket = google_storage_bucket.sources.name
        object = google_storage_bucket_object.functions.name
      }
    }
  }

  service_config {
    service_account_email = google_service_account.function["document_uploaded"].email
    ingress_settings      = "ALLOW_INTERNAL_ONLY" # only Eventarc calls it
    timeout_seconds       = local.timeout_seconds.document_uploaded
    # 2 GiB: a document is held in memory while it is sent inline to Gemini (up to ~20 MB, several copies while
    # encoding), four at a time; in batch mode a submission holds about 2.5 x batch_max_bytes (~130 MB at 50 MiB).
    available_memory = "2Gi"
    available_cpu    = "1"
    # Four: the work is waiting on Gemini, so one instance can wait on several calls; more would multiply the
    # documents in memory. max instances x 4 bounds the Gemini calls in flight (document_max_instances).
    max_instance_request_concurrency = 4
    min_instance_count               = 0
    max_instance_count               = var.document_max_instances

    environment_variables = {
      GOOGLE_CLOUD_PROJECT = var.project_id
      JAVA_TOOL_OPTIONS    = var.jvm_options # read by the JVM itself, before any code
      ONCE_COLLECTION      = local.ledger_collection
      ONCE_LEASE_SECONDS   = tostring(var.lease_seconds)
      ONCE_RETENTION_DAYS  = tostring(var.retention_days)
      RESULTS_TOPIC          = google_pubsub_topic.results.id
      RECORDS_RETENTION_DAYS = local.records_retention
      ANALYSIS_MODE          = var.analysis_mode
      GEMINI_MODEL           = var.gemini_model
      GEMINI_TIMEOUT_SECONDS = tostring(var.gemini_timeout_seconds)
      GEMINI_PRICES          = var.gemini_prices
      MAX_DOCUMENT_BYTES     = tostring(var.max_document_bytes)
      ONCE_MAX_ATTEMPTS      = tostring(var.max_attempts)
      # Batch mode gathers documents into jobs (BatchSubmitter); the reconciler uses the same limits.
      BATCH_MAX_DOCUMENTS      = tostring(var.batch_max_documents)
      BATCH_MAX_BYTES          = tostring(var.batch_max_bytes)
      BATCH_INLINE_MAX_BYTES   = tostring(var.batch_inline_max_bytes)
      BATCH_MAX_WAIT_SECONDS   = tostring(var.batch_max_wait_seconds)
      BATCH_MAX_JOBS_IN_FLIGHT = tostring(var.batch_max_jobs_in_flight)
      # Batch jobs name the webhook's URL (dynamic webhooks), or none (blank: the registered, static one).
      GEMINI_WEBHOOK_URL = var.gemini_webhooks == "dynamic" ? local.webhook_url : ""
      # The spending guard (blank: no cap; the day is UTC unless a zone is given).
      GEMINI_DAILY_BUDGET_USD = local.gemini_daily_budget
      ONCE_BUDGET_TIMEZONE    = var.budget_timezone
    }

    secret_environment_variables {
      key        = "GEMINI_API_KEY"
      project_id = var.project_id
      secret     = google_secret_manager_secret.gemini_api_key.secret_id
      version    = var.gemini_api_key_version
    }

    secret_environment_variables {
      key        = "RESULTS_SIGNING_KEY"
      project_id = var.project_id
      secret     = google_secret_manager_secret.results_signing_key.secret_id
      version    = var.results_signing_key_version
    }
  }

  event_trigger {
    trigger_region        = var.region
    event_type            = "google.cloud.storage.object.v1.finalized"
    retry_policy          = "RETRY_POLICY_RETRY" # a failed or in-flight delivery throws and comes back
    service_account_email = google_service_account.trigger.email

    event_filters {
      attribute = "bucket"
      value     = google_storage_bucket.inbox.name
    }
  }

  lifecycle {
    precondition {
      condition     = var.gemini_timeout_seconds < local.timeout_seconds.document_uploaded
      error_message = "gemini_timeout_seconds (${var.gemini_timeout_seconds}) must be below DocumentUploaded's timeout (${local.timeout_seconds.document_uploaded} s)."
    }
  }

  depends_on = [
    time_sleep.agents_ready, # the service agents exist and their roles have propagated (agents.tf)
    google_project_iam_member.trigger_event_receiver,
    google_project_iam_member.build,
    google_project_iam_member.build_sources,
    google_artifact_registry_repository_iam_member.build_writer,
    google_secret_manager_secret_iam_member.gemini_api_key,
    google_secret_manager_secret_iam_member.results_signing_key,
  ]
}

resource "google_cloudfunctions2_function" "message_delivered" {
  name        = "${var.name_prefix}-message-delivered"
  project     = var.project_id
  location    = var.region
  description = "Notifies NOTIFY_URL once per published result; dead-letters what can never be delivered."
  labels      = local.labels

  build_config {
    runtime           = "java21"
    entry_point       = "dev.once.functions.MessageDelivered"
    service_account   = google_service_account.build.id
    docker_repository = google_artifact_registry_repository.functions.id
    source {
      storage_source {
        bucket = google_storage_bucket.sources.name
        object = google_storage_bucket_object.functions.name
      }
    }
  }

  service_config {
    service_account_email = google_service_account.function["message_delivered"].email
    ingress_settings      = "ALLOW_INTERNAL_ONLY" # only Eventarc calls it
    timeout_seconds       = local.timeout_seconds.message_delivered
    available_memory      = "1Gi"
    available_cpu         = "1"
    # Sixteen: each delivery is a ledger write and one outgoing HTTP call, almost all waiting.
    max_instance_request_concurrency = 16
    min_instance_count               = 0
    # Bounds the load the notified endpoint sees (10 x 16 requests at once).
    max_instance_count = 10

    environment_variables = {
      GOOGLE_CLOUD_PROJECT = var.project_id
      JAVA_TOOL_OPTIONS    = var.jvm_options # read by the JVM itself, before any code
      ONCE_COLLECTION      = local.ledger_collection
      ONCE_LEASE_SECONDS   = tostring(var.lease_seconds)
      ONCE_RETENTION_DAYS  = tostring(var.retention_days)
      NOTIFY_URL             = var.notify_url
      NOTIFY_TIMEOUT_SECONDS = tostring(var.notify_timeout_seconds)
      DEAD_LETTER_TOPIC      = google_pubsub_topic.dead_letter.id
    }

    # Signs every notification (Standard Webhooks); checks that a result is the pipeline's (RESULTS_SIGNING_KEY).
    secret_environment_variables {
      key        = "NOTIFY_SIGNING_SECRET"
      project_id = var.project_id
      secret     = google_secret_manager_secret.notify_signing_secret.secret_id
      version    = var.notify_signing_secret_version
    }

    secret_environment_variables {
      key        = "RESULTS_SIGNING_KEY"
      project_id = var.project_id
      secret     = google_secret_manager_secret.results_signing_key.secret_id
      version    = var.results_signing_key_version
    }
  }

  event_trigger {
    trigger_region        = var.region
    event_type            = "google.cloud.pubsub.topic.v1.messagePublished"
    pubsub_topic          = google_pubsub_topic.results.id
    retry_policy          = "RETRY_POLICY_RETRY"
    service_account_email = google_service_account.trigger.email
  }

  depends_on = [
    time_sleep.agents_ready, # the service agents exist and their roles have propagated (agents.tf)
    google_project_iam_member.trigger_event_receiver,
    google_project_iam_member.build,
    google_project_iam_member.build_sources,
    google_artifact_registry_repository_iam_member.build_writer,
    google_secret_manager_secret_iam_member.notify_signing_secret,
    google_secret_manager_secret_iam_member.results_signing_key,
  ]
}

resource "google_cloudfunctions2_function" "gemini_webhook" {
  name        = local.webhook_function_name
  project     = var.project_id
  location    = var.region
  description = "Receives Gemini batch completion webhooks (static: HMAC-signed; dynamic: Google-signed tokens) and hands each finished job to BatchCompleted."
  labels      = local.labels

  build_config {
    runtime           = "java21"
    entry_point       = "dev.once.functions.GeminiWebhook"
    service_account   = google_service_account.build.id
    docker_repository = google_artifact_registry_repository.functions.id
    source {
      storage_source {
        bucket = google_storage_bucket.sources.name
        object = google_storage_bucket_object.functions.name
      }
    }
  }

  service_config {
    service_account_email = google_service_account.function["gemini_webhook"].email
    # Public: Gemini calls it from the internet. It verifies every signature itself (iam.tf: webhook_public).
    ingress_settings = "ALLOW_ALL"
    timeout_seconds  = local.timeout_seconds.gemini_webhook
    available_memory = "1Gi"
    available_cpu    = "1"
    # Thirty-two: a delivery is a signature check on at most 1 MiB and a few Firestore and Pub/Sub calls.
    max_instance_request_concurrency = 32
    # One warm instance by default: Gemini disables endpoints that fail often, and a JVM cold start is slow.
    min_instance_count = var.webhook_min_instances
    # A cap on what a flood of (unsigned, rejected) requests can cost.
    max_instance_count = 10

    environment_variables = {
      GOOGLE_CLOUD_PROJECT = var.project_id
      JAVA_TOOL_OPTIONS    = var.jvm_options # read by the JVM itself, before any code
      ONCE_COLLECTION      = local.ledger_collection
      ONCE_LEASE_SECONDS   = tostring(var.lease_seconds)
      ONCE_RETENTION_DAYS  = tostring(var.retention_days)
      # Finished jobs are handed to BatchCompleted: the answer to Gemini does not wait for the completion.
      BATCH_COMPLETIONS_TOPIC = google_pubsub_topic.batch_completions.id
      # Dynamic webhooks: tokens must be made for this URL (the one batch jobs name) and verify with these keys.
      GEMINI_WEBHOOK_URL      = local.webhook_url
      GEMINI_WEBHOOK_JWKS_URL = var.gemini_webhook_jwks_url
      GEMINI_WEBHOOK_ISSUER   = var.gemini_webhook_issuer
    }

    # Static webhooks (and any delivery Gemini still sends to a registered webhook after a switch to dynamic).
    secret_environment_variables {
      key        = "GEMINI_WEBHOOK_SECRET"
      project_id = var.project_id
      secret     = google_secret_manager_secret.gemini_webhook_secret.secret_id
      version    = var.gemini_webhook_secret_version
    }

  }

  lifecycle {
    precondition {
      condition     = var.gemini_timeout_seconds < local.timeout_seconds.gemini_webhook
      error_message = "gemini_timeout_seconds (${var.gemini_timeout_seconds}) must be below GeminiWebhook's timeout (${local.timeout_seconds.gemini_webhook} s)."
    }
    postcondition {
      condition     = var.gemini_webhooks != "dynamic" || self.url == local.webhook_url
      error_message = "The webhook's URL is ${self.url}, not ${local.webhook_url}: batch jobs would name a URL whose tokens the webhook refuses. Set gemini_webhooks = \"static\" and register the webhook (docs/DEPLOY.md: Gemini webhooks)."
    }
  }

  depends_on = [
    google_project_iam_member.build,
    google_project_iam_member.build_sources,
    google_artifact_registry_repository_iam_member.build_writer,
    google_secret_manager_secret_iam_member.gemini_webhook_secret,
  ]
}

resource "google_cloudfunctions2_function" "batch_completed" {
  name        = "${var.name_prefix}-batch-completed"
  project     = var.project_id
  location    = var.region
  description = "Completes each finished Gemini batch job once, as the webhook handed it off: records, bills and publishes its documents."
  labels      = local.labels

  build_config {
    runtime           = "java21"
    entry_point       = "dev.once.functions.BatchCompleted"
    service_account   = google_service_account.build.id
    docker_repository = google_artifact_registry_repository.functions.id
    source {
      storage_source {
        bucket = google_storage_bucket.sources.name
        object = google_storage_bucket_object.functions.name
      }
    }
  }

  service_config {
    service_account_email = google_service_account.function["batch_completed"].email
    ingress_settings      = "ALLOW_INTERNAL_ONLY" # only Eventarc calls it
    timeout_seconds       = local.timeout_seconds.batch_completed
    # 2 GiB: a job's answers are read into memory (inline responses, or its results file).
    available_memory = "2Gi"
    available_cpu    = "1"
    # Four: each completion waits on Gemini, Firestore and Pub/Sub, and holds its job's answers in memory.
    max_instance_request_concurrency = 4
    min_instance_count               = 0
    # Jobs in flight are at most batch_max_jobs_in_flight (100 at Gemini): 10 x 4 completions at once drain them.
    max_instance_count = 10

    environment_variables = {
      GOOGLE_CLOUD_PROJECT = var.project_id
      JAVA_TOOL_OPTIONS    = var.jvm_options # read by the JVM itself, before any code
      ONCE_COLLECTION      = local.ledger_collection
      ONCE_LEASE_SECONDS   = tostring(var.lease_seconds)
      ONCE_RETENTION_DAYS  = tostring(var.retention_days)
      RESULTS_TOPIC          = google_pubsub_topic.results.id
      RECORDS_RETENTION_DAYS = local.records_retention
      GEMINI_MODEL           = var.gemini_model
      GEMINI_TIMEOUT_SECONDS = tostring(var.gemini_timeout_seconds)
      GEMINI_PRICES          = var.gemini_prices
    }

    secret_environment_variables {
      key        = "GEMINI_API_KEY"
      project_id = var.project_id
      secret     = google_secret_manager_secret.gemini_api_key.secret_id
      version    = var.gemini_api_key_version
    }

    secret_environment_variables {
      key        = "RESULTS_SIGNING_KEY"
      project_id = var.project_id
      secret     = google_secret_manager_secret.results_signing_key.secret_id
      version    = var.results_signing_key_version
    }
  }

  event_trigger {
    trigger_region        = var.region
    event_type            = "google.cloud.pubsub.topic.v1.messagePublished"
    pubsub_topic          = google_pubsub_topic.batch_completions.id
    retry_policy          = "RETRY_POLICY_RETRY" # a job not finished yet, in flight or failed throws and comes back
    service_account_email = google_service_account.trigger.email
  }

  lifecycle {
    precondition {
      condition     = var.gemini_timeout_seconds < local.timeout_seconds.batch_completed
      error_message = "gemini_timeout_seconds (${var.gemini_timeout_seconds}) must be below BatchCompleted's timeout (${local.timeout_seconds.batch_completed} s)."
    }
  }

  depends_on = [
    time_sleep.agents_ready, # the service agents exist and their roles have propagated (agents.tf)
    google_project_iam_member.trigger_event_receiver,
    google_project_iam_member.build,
    google_project_iam_member.build_sources,
    google_artifact_registry_repository_iam_member.build_writer,
    google_secret_manager_secret_iam_member.gemini_api_key,
    google_secret_manager_secret_iam_member.results_signing_key,
  ]
}

resource "google_cloudfunctions2_function" "gemini_reconciler" {
  name        = "${var.name_prefix}-gemini-reconciler"
  project     = var.project_id
  location    = var.region
  description = "On a schedule: lists Gemini batch jobs, looks up those its waiting documents name, completes finished ones the webhook missed."
  labels      = local.labels

  build_config {
    runtime           = "java21"
    entry_point       = "dev.once.functions.GeminiReconciler"
    service_account   = google_service_account.build.id
    docker_repository = google_artifact_registry_repository.functions.id
    source {
      storage_source {
        bucket = google_storage_bucket.sources.name
        object = google_storage_bucket_object.functions.name
      }
    }
  }

  service_config {
    service_account_email = google_service_account.function["gemini_reconciler"].email
    ingress_settings      = "ALLOW_INTERNAL_ONLY" # Cloud Scheduler counts as internal
    timeout_seconds       = local.timeout_seconds.gemini_reconciler
    # 1 GiB: a run submits its batch jobs one after another, each holding about 2.5 x batch_max_bytes.
    available_memory      = "1Gi"
    available_cpu         = "1"
    # One run at a time on one instance: a second concurrent poll would only race the first for the same jobs
    # (harmless thanks to the ledger, but wasted Gemini and Firestore calls). An overlapping call is refused.
    max_instance_request_concurrency = 1
    min_instance_count               = 0
    max_instance_count               = 1

    environment_variables = {
      GOOGLE_CLOUD_PROJECT = var.project_id
      JAVA_TOOL_OPTIONS    = var.jvm_options # read by the JVM itself, before any code
      ONCE_COLLECTION      = local.ledger_collection
      ONCE_LEASE_SECONDS   = tostring(var.lease_seconds)
      ONCE_RETENTION_DAYS  = tostring(var.retention_days)
      RESULTS_TOPIC          = google_pubsub_topic.results.id
      RECORDS_RETENTION_DAYS = local.records_retention
      GEMINI_MODEL           = var.gemini_model
      GEMINI_TIMEOUT_SECONDS = tostring(var.gemini_timeout_seconds)
      GEMINI_PRICES          = var.gemini_prices
      # Resumes deferred documents when the day's budget allows (blank: no cap), analysing them as DocumentUploaded
      # would: the same mode, limits and batch webhook.
      GEMINI_DAILY_BUDGET_USD = local.gemini_daily_budget
      ONCE_BUDGET_TIMEZONE    = var.budget_timezone
      ANALYSIS_MODE           = var.analysis_mode
      MAX_DOCUMENT_BYTES      = tostring(var.max_document_bytes)
      ONCE_MAX_ATTEMPTS       = tostring(var.max_attempts)
      BATCH_MAX_DOCUMENTS      = tostring(var.batch_max_documents)
      BATCH_MAX_BYTES          = tostring(var.batch_max_bytes)
      BATCH_INLINE_MAX_BYTES   = tostring(var.batch_inline_max_bytes)
      BATCH_MAX_WAIT_SECONDS   = tostring(var.batch_max_wait_seconds)
      BATCH_MAX_JOBS_IN_FLIGHT = tostring(var.batch_max_jobs_in_flight)
      GEMINI_WEBHOOK_URL      = var.gemini_webhooks == "dynamic" ? local.webhook_url : ""
    }

    secret_environment_variables {
      key        = "GEMINI_API_KEY"
      project_id = var.project_id
      secret     = google_secret_manager_secret.gemini_api_key.secret_id
      version    = var.gemini_api_key_version
    }

    secret_environment_variables {
      key        = "RESULTS_SIGNING_KEY"
      project_id = var.project_id
      secret     = google_secret_manager_secret.results_signing_key.secret_id
      version    = var.results_signing_key_version
    }
  }

  depends_on = [
    google_project_iam_member.build,
    google_project_iam_member.build_sources,
    google_artifact_registry_repository_iam_member.build_writer,
    google_secret_manager_secret_iam_member.gemini_api_key,
    google_secret_manager_secret_iam_member.results_signing_key,
  ]
}
