variable "project_id" {
  description = "Project to deploy into. Its Firestore (default) database must be free (or imported, see docs/DEPLOY.md)."
  type        = string

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{4,28}[a-z0-9]$", var.project_id))
    error_message = "project_id must be a Google Cloud project id: 6-30 lowercase letters, digits or hyphens, starting with a letter."
  }
}

variable "region" {
  description = "Region of the functions, the inbox bucket, the Eventarc triggers and the scheduler job (a storage trigger must sit in its bucket's region)."
  type        = string
  default     = "europe-west1"

  validation {
    condition     = can(regex("^[a-z]+-[a-z]+[0-9]+$", var.region))
    error_message = "region must be a single region such as europe-west1 or us-central1, not a multi-region."
  }
}

variable "firestore_location" {
  description = "Location of the Firestore (default) database: a region (e.g. europe-west1) or a multi-region (eur3, nam5). Null means var.region. Cannot be changed after creation."
  type        = string
  default     = null

  validation {
    condition     = var.firestore_location == null || can(regex("^([a-z]+-[a-z]+[0-9]+|nam[0-9]+|eur[0-9]+)$", var.firestore_location))
    error_message = "firestore_location must be a region (europe-west1) or a Firestore multi-region (nam5, eur3)."
  }
}

variable "name_prefix" {
  description = "Prefix of every resource name (functions, service accounts, topics, buckets). Short, so service account ids stay within 30 characters."
  type        = string
  default     = "once"

  validation {
    condition     = can(regex("^[a-z][a-z0-9-]{0,9}[a-z0-9]$", var.name_prefix))
    error_message = "name_prefix must be 2-11 lowercase letters, digits or hyphens, starting with a letter and not ending with a hyphen."
  }
}

variable "functions_jar" {
  description = "Path of the shaded deploy jar. Null means the single functions/target/once-functions-*-deploy.jar that `mvn -pl functions -am package` builds."
  type        = string
  default     = null

  validation {
    condition     = var.functions_jar == null || endswith(coalesce(var.functions_jar, "x"), ".jar")
    error_message = "functions_jar must name a .jar file."
  }
}

variable "notify_url" {
  description = "HTTPS endpoint that MessageDelivered notifies once per result (NOTIFY_URL); it receives an Idempotency-Key header."
  type        = string

  validation {
    condition     = can(regex("^https://[^\\s/]+", var.notify_url))
    error_message = "notify_url must be an https:// URL."
  }
}

variable "analysis_mode" {
  description = "ANALYSIS_MODE: sync (one generateContent call per document) or batch (documents gathered into Gemini batch jobs of many, completed by the webhook or the reconciler)."
  type        = string
  default     = "sync"

  validation {
    condition     = contains(["sync", "batch"], var.analysis_mode)
    error_message = "analysis_mode must be sync or batch."
  }
}

variable "gemini_webhooks" {
  description = "Which Gemini webhooks new batch jobs use: dynamic (each job names the webhook's URL in webhook_config.uris, tokens signed by Google; nothing to register) or static (a webhook registered by hand, signed with the whsec_ secret in GEMINI_WEBHOOK_SECRET). The webhook accepts both either way."
  type        = string
  default     = "dynamic"

  validation {
    condition     = contains(["dynamic", "static"], var.gemini_webhooks)
    error_message = "gemini_webhooks must be dynamic or static."
  }
}

variable "gemini_webhook_jwks_url" {
  description = "GEMINI_WEBHOOK_JWKS_URL: where Google publishes the keys of dynamic webhooks."
  type        = string
  default     = "https://generativelanguage.googleapis.com/.well-known/jwks.json"

  validation {
    condition     = can(regex("^https://[^\\s/]+", var.gemini_webhook_jwks_url))
    error_message = "gemini_webhook_jwks_url must be an https:// URL."
  }
}

variable "gemini_webhook_issuer" {
  description = "GEMINI_WEBHOOK_ISSUER: the iss of dynamic webhook tokens. Google does not document it; change it only if the webhook logs refused tokens naming another iss."
  type        = string
  default     = "https://generativelanguage.googleapis.com"
}

variable "gemini_model" {
  description = "GEMINI_MODEL used for analyses and batch jobs: one Google serves (docs/DEPLOY.md, choosing a model; once models)."
  type        = string
  default     = "gemini-3.5-flash-lite"

  validation {
    condition     = can(regex("^[a-z0-9][a-z0-9.-]*$", var.gemini_model))
    error_message = "gemini_model must be a model id such as gemini-3.5-flash-lite (no models/ prefix)."
  }
}

variable "gemini_timeout_seconds" {
  description = "GEMINI_TIMEOUT_SECONDS: bound on one Gemini call. A paid call's lease outlasts it, so a holder that dies during the call is taken over after about this long (plus 5 s); a synchronous analysis of a long PDF may need more than the default. It must stay inside the timeouts of DocumentUploaded and GeminiWebhook."
  type        = number
  default     = 60

  validation {
    condition     = var.gemini_timeout_seconds == floor(var.gemini_timeout_seconds) && var.gemini_timeout_seconds >= 5 && var.gemini_timeout_seconds <= 300
    error_message = "gemini_timeout_seconds must be a whole number of seconds between 5 and 300."
  }
}

variable "jvm_options" {
  description = "JAVA_TOOL_OPTIONS of every function: flags the JVM reads when an instance starts. The default stops the JIT at its first tier (C1): measured with dev/bench coldstart on the 1-vCPU sizing, a cold first delivery ~19 % and a cold duplicate ~18 % sooner, and less CPU per event over an instance's first 700 events (C2's compilations cost more than they save in an instance that waits on Gemini). Blank: the JVM's defaults."
  type        = string
  default     = "-XX:TieredStopAtLevel=1"
}

variable "gemini_prices" {
  description = "GEMINI_PRICES: prices added to (or overriding) the built-in catalog for billing entries, as model=input/output USD per million tokens, comma-separated; model=input/output/longInput/longOutput adds the rates of a prompt over 200k tokens; @YYYY-MM-DD after an entry is the day it takes effect. A model named here is priced by its entries alone. Empty keeps the built-in list prices, with their dates."
  type        = string
  default     = ""

  validation {
    condition     = can(regex("^([a-z0-9][a-z0-9.-]*=[0-9.]+/[0-9.]+(/[0-9.]+/[0-9.]+)?(@[0-9]{4}-[0-9]{2}-[0-9]{2})?)?(,[a-z0-9][a-z0-9.-]*=[0-9.]+/[0-9.]+(/[0-9.]+/[0-9.]+)?(@[0-9]{4}-[0-9]{2}-[0-9]{2})?)*$", replace(var.gemini_prices, " ", "")))
    error_message = "gemini_prices must look like gemini-3.8-flash=1.50/7.50@2027-01-01,house-model=1.25/10/2.50/15 (or be empty)."
  }
}

variable "batch_max_documents" {
  description = "BATCH_MAX_DOCUMENTS: batch mode, documents per batch job; a full job is submitted at once."
  type        = number
  default     = 1000

  validation {
    condition     = var.batch_max_documents == floor(var.batch_max_documents) && var.batch_max_documents >= 1 && var.batch_max_documents <= 5000
    error_message = "batch_max_documents must be a whole number between 1 and 5000 (the gathering records its members' ids in one Firestore document of at most 1 MiB)."
  }
}

variable "batch_max_bytes" {
  description = "BATCH_MAX_BYTES: batch mode, the documents' bytes per batch job. A submission holds about 2.5 times this in memory: 50 MiB fits the reconciler's 1 GiB and DocumentUploaded's 2 GiB at four requests (functions.tf); more needs more memory there."
  type        = number
  default     = 52428800

  validation {
    condition     = var.batch_max_bytes == floor(var.batch_max_bytes) && var.batch_max_bytes >= 1 && var.batch_max_bytes <= 1450000000
    error_message = "batch_max_bytes must be a whole number between 1 and 1450000000 (an input file's 2 GB in base64, with its prompts)."
  }
}

variable "batch_inline_max_bytes" {
  description = "BATCH_INLINE_MAX_BYTES: batch mode, the most a job's requests may take inlined; a larger job is made from a JSONL input file of the Files API."
  type        = number
  default     = 19000000

  validation {
    condition     = var.batch_inline_max_bytes == floor(var.batch_inline_max_bytes) && var.batch_inline_max_bytes >= 1 && var.batch_inline_max_bytes <= 19000000
    error_message = "batch_inline_max_bytes must be a whole number between 1 and 19000000 (Gemini's 20 MB of inlined requests, less a margin)."
  }
}

variable "batch_max_wait_seconds" {
  description = "BATCH_MAX_WAIT_SECONDS: batch mode, a job is submitted once its oldest document has waited this long, full or not (0: at once). The reconciler's schedule adds up to its period."
  type        = number
  default     = 300

  validation {
    condition     = var.batch_max_wait_seconds == floor(var.batch_max_wait_seconds) && var.batch_max_wait_seconds >= 0
    error_message = "batch_max_wait_seconds must be a whole number, 0 or more."
  }
}

variable "batch_max_jobs_in_flight" {
  description = "BATCH_MAX_JOBS_IN_FLIGHT: batch mode, batch jobs gathering, submitted or running at once; below Gemini's 100 per project, so other users of the project keep some."
  type        = number
  default     = 90

  validation {
    condition     = var.batch_max_jobs_in_flight == floor(var.batch_max_jobs_in_flight) && var.batch_max_jobs_in_flight >= 1 && var.batch_max_jobs_in_flight <= 100
    error_message = "batch_max_jobs_in_flight must be a whole number between 1 and 100."
  }
}

variable "max_document_bytes" {
  description = "MAX_DOCUMENT_BYTES: largest document analysed. The default, 14 MiB, keeps the base64-encoded inline request under Gemini's 20 MB request limit."
  type        = number
  default     = 14680064

  validation {
    condition     = var.max_document_bytes == floor(var.max_document_bytes) && var.max_document_bytes >= 1 && var.max_document_bytes <= 15000000
    error_message = "max_document_bytes must be a whole number between 1 and 15000000 (Gemini's inline limit)."
  }
}

variable "notify_timeout_seconds" {
  description = "NOTIFY_TIMEOUT_SECONDS: bound on one notification request; a timeout is retried."
  type        = number
  default     = 10

  validation {
    condition     = var.notify_timeout_seconds == floor(var.notify_timeout_seconds) && var.notify_timeout_seconds >= 1 && var.notify_timeout_seconds <= 60
    error_message = "notify_timeout_seconds must be a whole number of seconds between 1 and 60."
  }
}

variable "lease_seconds" {
  description = "ONCE_LEASE_SECONDS: a claim's lease. Its holder renews it every third of it while it works, so it never lapses under a live holder, and a dead holder's claim is taken over within one lease. A paid Gemini call takes a lease that outlasts gemini_timeout_seconds whatever this is."
  type        = number
  default     = 60

  validation {
    condition     = var.lease_seconds == floor(var.lease_seconds) && var.lease_seconds >= 15 && var.lease_seconds <= 86400
    error_message = "lease_seconds must be a whole number of seconds between 15 (a renewal must fit in a third of it) and 86400."
  }
}

variable "max_attempts" {
  description = "ONCE_MAX_ATTEMPTS: tries of a paid Gemini call that may have been billed (timeouts, resets, 5xx after the request left, a holder that died) before a document is given up, failed and published as such. Refusals Google does not bill (429, 503, other 4xx) do not count, so an outage delays documents instead of failing them."
  type        = number
  default     = 5

  validation {
    condition     = var.max_attempts == floor(var.max_attempts) && var.max_attempts >= 1 && var.max_attempts <= 100
    error_message = "max_attempts must be a whole number between 1 and 100."
  }
}

variable "retention_days" {
  description = "ONCE_RETENTION_DAYS: how long a finished ledger record is kept (Firestore TTL on expireAt) to absorb late duplicates."
  type        = number
  default     = 30

  validation {
    # A dead letter can be re-driven up to 8 days after its event first arrived (Eventarc retries for a day, the
    # dead-letter hold keeps a week): the ledger must still remember every record that event made, or the re-drive
    # would pay for it again. (The reconciler, too, leaves alone jobs that ended more than retention_days - 1 ago.)
    condition     = var.retention_days == floor(var.retention_days) && var.retention_days >= 9 && var.retention_days <= 3650
    error_message = "retention_days must be a whole number of days between 9 (a dead letter is re-driven up to 8 days after its event) and 3650."
  }
}

variable "gemini_api_key_version" {
  description = "Secret Manager version of GEMINI_API_KEY the functions read: a number (the default, 1: a change deploys new revisions, and a version added by mistake is not read) or latest."
  type        = string
  default     = "1"

  validation {
    condition     = can(regex("^(latest|[1-9][0-9]*)$", var.gemini_api_key_version))
    error_message = "gemini_api_key_version must be latest or a version number."
  }
}

variable "gemini_webhook_secret_version" {
  description = "Secret Manager version of GEMINI_WEBHOOK_SECRET (one or more whsec_ secrets, blank-separated) the webhook reads: a number (default 1) or latest."
  type        = string
  default     = "1"

  validation {
    condition     = can(regex("^(latest|[1-9][0-9]*)$", var.gemini_webhook_secret_version))
    error_message = "gemini_webhook_secret_version must be latest or a version number."
  }
}

variable "notify_signing_secret_version" {
  description = "Secret Manager version of NOTIFY_SIGNING_SECRET (one or more whsec_ secrets, blank-separated: both while receivers move to a new one) that signs every notification: a number (default 1) or latest."
  type        = string
  default     = "1"

  validation {
    condition     = can(regex("^(latest|[1-9][0-9]*)$", var.notify_signing_secret_version))
    error_message = "notify_signing_secret_version must be latest or a version number."
  }
}

variable "results_signing_key_version" {
  description = "Secret Manager version of RESULTS_SIGNING_KEY (one or more whsec_ keys, blank-separated during a rotation) that signs every published result: a number (default 1) or latest."
  type        = string
  default     = "1"

  validation {
    condition     = can(regex("^(latest|[1-9][0-9]*)$", var.results_signing_key_version))
    error_message = "results_signing_key_version must be latest or a version number."
  }
}

variable "records_retention_days" {
  description = "RECORDS_RETENTION_DAYS: how long the analyses and billing documents (invoice data) are kept after their last write, in days: a Firestore TTL on their expireAt. Null (the default): kept until deleted; invoices often must be kept for years."
  type        = number
  default     = null

  validation {
    condition     = var.records_retention_days == null || try(var.records_retention_days == floor(var.records_retention_days) && var.records_retention_days >= 30 && var.records_retention_days <= 36500, false)
    error_message = "records_retention_days must be a whole number of days from 30 to 36500, or null to keep the records."
  }
}

variable "inbox_retention_days" {
  description = "How long an uploaded document (every generation) is kept in the inbox, in days: a lifecycle rule deletes older ones. Null (the default): kept."
  type        = number
  default     = null

  validation {
    condition     = var.inbox_retention_days == null || try(var.inbox_retention_days == floor(var.inbox_retention_days) && var.inbox_retention_days >= 9, false)
    error_message = "inbox_retention_days must be a whole number of days, at least 9 (a dead letter is re-driven up to 8 days after its event), or null to keep them."
  }
}

variable "document_max_instances" {
  description = "Upper bound of DocumentUploaded instances. Each runs up to 4 Gemini calls at once, so this times 4 bounds the Gemini requests in flight: keep it within the API key's rate limit."
  type        = number
  default     = 10

  validation {
    condition     = var.document_max_instances == floor(var.document_max_instances) && var.document_max_instances >= 1 && var.document_max_instances <= 100
    error_message = "document_max_instances must be a whole number between 1 and 100."
  }
}

variable "webhook_min_instances" {
  description = "Warm GeminiWebhook instances. 1 (default) keeps a JVM ready so a delivery is not answered after a cold start; 0 saves that instance's cost and leaves slow first deliveries to Gemini's retries and the reconciler."
  type        = number
  default     = 1

  validation {
    condition     = contains([0, 1, 2], var.webhook_min_instances)
    error_message = "webhook_min_instances must be 0, 1 or 2."
  }
}

variable "reconcile_schedule" {
  description = "Cron schedule (in reconcile_time_zone) of the GeminiReconciler run. Keep the interval above the reconciler's 540 s timeout so runs do not overlap."
  type        = string
  default     = "*/10 * * * *"

  validation {
    condition     = length(split(" ", trimspace(var.reconcile_schedule))) == 5
    error_message = "reconcile_schedule must be a five-field cron expression."
  }
}

variable "reconcile_time_zone" {
  description = "Time zone of reconcile_schedule (tz database name)."
  type        = string
  default     = "Etc/UTC"

  validation {
    condition     = can(regex("^[A-Za-z_]+(/[A-Za-z0-9_+-]+)*$", var.reconcile_time_zone))
    error_message = "reconcile_time_zone must be a tz database name such as Etc/UTC or Europe/Paris."
  }
}

variable "gemini_daily_budget_usd" {
  description = "GEMINI_DAILY_BUDGET_USD: the most the pipeline may spend on Gemini in one day, in US dollars. Past it, documents are deferred (not lost) until budget is available again. On by default (20 USD a day, about 25,000 one-page invoices with gemini-3.5-flash-lite): raise it to what your volume needs. In batch mode each queued document holds its reservation (up to the model's ceiling) until its job completes, so a burst of about 1,000 documents already nears 20 USD and is deferred in part. Null, set explicitly: no cap, and no budget alerts."
  type        = number
  default     = 20

  validation {
    condition     = var.gemini_daily_budget_usd == null || try(var.gemini_daily_budget_usd > 0, false)
    error_message = "gemini_daily_budget_usd must be a positive amount of US dollars, or null for no cap."
  }
}

variable "budget_timezone" {
  description = "ONCE_BUDGET_TIMEZONE: time zone (tz database name) whose midnight starts a new budget day. Empty: UTC."
  type        = string
  default     = ""

  validation {
    condition     = var.budget_timezone == "" || can(regex("^[A-Za-z_]+(/[A-Za-z0-9_+-]+)*$", var.budget_timezone))
    error_message = "budget_timezone must be a tz database name such as Etc/UTC or Europe/Paris, or empty for UTC."
  }
}

variable "billing_account" {
  description = "Billing account id (XXXXXX-XXXXXX-XXXXXX) of the project. When set, a Cloud Billing budget on the project's whole spend mails the billing account's admins at 50, 90 and 100 % of billing_budget_usd a month. Null: no billing budget."
  type        = string
  default     = null

  validation {
    condition     = var.billing_account == null || can(regex("^[0-9A-F]{6}-[0-9A-F]{6}-[0-9A-F]{6}$", coalesce(var.billing_account, "x")))
    error_message = "billing_account must look like 012345-6789AB-CDEF01."
  }
}

variable "billing_budget_usd" {
  description = "Monthly amount of the Cloud Billing budget (only with billing_account). Null: 31 x gemini_daily_budget_usd when a daily budget is set, else the billing budget follows last month's spend."
  type        = number
  default     = null

  validation {
    condition     = var.billing_budget_usd == null || try(var.billing_budget_usd > 0, false)
    error_message = "billing_budget_usd must be a positive amount, or null."
  }
}

variable "max_delivery_attempts" {
  description = "Deliveries of one event to DocumentUploaded, MessageDelivered or BatchCompleted before Pub/Sub moves it to the dead-letter topic. With the 10-600 s backoff set on the trigger subscriptions, 30 attempts take about 4 hours plus the executions themselves, well inside the subscriptions' 24-hour retention (a message older than that is dropped, not dead-lettered)."
  type        = number
  default     = 30

  validation {
    condition     = var.max_delivery_attempts == floor(var.max_delivery_attempts) && var.max_delivery_attempts >= 5 && var.max_delivery_attempts <= 60
    error_message = "max_delivery_attempts must be a whole number between 5 (Pub/Sub's minimum) and 60 (more could outlast the 24-hour retention)."
  }
}

variable "failed_alert_min_events" {
  description = "Alert when one function logs at least this many failed outcomes within 15 minutes (a revoked Gemini key fails every document)."
  type        = number
  default     = 5

  validation {
    condition     = var.failed_alert_min_events == floor(var.failed_alert_min_events) && var.failed_alert_min_events >= 1
    error_message = "failed_alert_min_events must be a positive whole number."
  }
}

variable "unacked_age_alert_seconds" {
  description = "Alert when the oldest event waiting in a trigger's subscription is older than this: events are being retried instead of handled."
  type        = number
  default     = 3600

  validation {
    condition     = var.unacked_age_alert_seconds == floor(var.unacked_age_alert_seconds) && var.unacked_age_alert_seconds >= 300
    error_message = "unacked_age_alert_seconds must be a whole number of seconds, at least 300."
  }
}

variable "duplicate_share_threshold" {
  description = "Alert when duplicates exceed this share of one function's outcomes over an hour. A few per thousand is normal; a few per cent means a mis-tuned retry/ack setting or a doubled notification. The reconciler's re-listing of jobs it completed before (outcome relisted) is not a redelivery and counts neither way."
  type        = number
  default     = 0.02

  validation {
    condition     = var.duplicate_share_threshold > 0 && var.duplicate_share_threshold < 1
    error_message = "duplicate_share_threshold must be a fraction between 0 and 1."
  }
}

variable "rejected_share_threshold" {
  description = "Alert when rejected (permanently bad) events exceed this share of one function's outcomes over an hour. Webhook calls refused before authentication (outcome unauthenticated) are internet noise and count neither way."
  type        = number
  default     = 0.05

  validation {
    condition     = var.rejected_share_threshold > 0 && var.rejected_share_threshold < 1
    error_message = "rejected_share_threshold must be a fraction between 0 and 1."
  }
}

variable "alert_min_events" {
  description = "Minimum outcomes of one function in the hour before a share alert may fire, so that 1 duplicate out of 3 events does not page anyone."
  type        = number
  default     = 50

  validation {
    condition     = var.alert_min_events == floor(var.alert_min_events) && var.alert_min_events >= 1
    error_message = "alert_min_events must be a positive whole number."
  }
}

variable "batch_queue_age_alert_seconds" {
  description = "Batch mode: alert when the oldest queued document has waited longer than this for its job (the reconciler's gauge, every run). A due job is submitted at the next upload or reconciler run, so allow batch_max_wait_seconds plus two reconciler periods."
  type        = number
  default     = 1800

  validation {
    condition     = var.batch_queue_age_alert_seconds == floor(var.batch_queue_age_alert_seconds) && var.batch_queue_age_alert_seconds >= 600
    error_message = "batch_queue_age_alert_seconds must be a whole number of seconds, at least 600."
  }
}

variable "batch_job_age_alert_seconds" {
  description = "Batch mode: alert when a batch job has run longer than this since its submission. Google's target turnaround is 24 hours; a job expires after 48."
  type        = number
  default     = 86400

  validation {
    condition     = var.batch_job_age_alert_seconds == floor(var.batch_job_age_alert_seconds) && var.batch_job_age_alert_seconds >= 3600
    error_message = "batch_job_age_alert_seconds must be a whole number of seconds, at least 3600."
  }
}

variable "given_up_share_threshold" {
  description = "Alert when documents given up (their result failed: tries used up, a batch job that gave no answer, an answer holding no invoice) exceed this share of the documents finished in an hour, with at least alert_min_events finished."
  type        = number
  default     = 0.02

  validation {
    condition     = var.given_up_share_threshold > 0 && var.given_up_share_threshold < 1
    error_message = "given_up_share_threshold must be a fraction between 0 and 1."
  }
}

variable "alert_notification_channels" {
  description = "Cloud Monitoring notification channel ids (projects/P/notificationChannels/N) every alert notifies. Empty means incidents are only shown in the console."
  type        = list(string)
  default     = []

  validation {
    condition     = alltrue([for c in var.alert_notification_channels : can(regex("^projects/[^/]+/notificationChannels/[^/]+$", c))])
    error_message = "Each notification channel must be a full id: projects/PROJECT/notificationChannels/ID."
  }
}

variable "labels" {
  description = "Labels added to every resource that takes labels."
  type        = map(string)
  default     = {}

  validation {
    condition     = alltrue([for k, v in var.labels : can(regex("^[a-z][a-z0-9_-]{0,62}$", k)) && can(regex("^[a-z0-9_-]{0,63}$", v))])
    error_message = "Label keys must start with a lowercase letter; keys and values may hold lowercase letters, digits, _ and - (at most 63)."
  }
}
