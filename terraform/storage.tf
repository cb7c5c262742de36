# The inbox bucket (documents in), the source bucket (the deployable zip) and the artifact repository the
# builds push to.

resource "google_storage_bucket" "inbox" {
  name     = local.inbox_bucket
  project  = var.project_id
  location = var.region # an Eventarc storage trigger must be in its bucket's region
  labels   = local.labels

  uniform_bucket_level_access = true
  public_access_prevention    = "enforced"
  # Uploaded documents are user data: `terraform destroy` refuses to delete a non-empty inbox (docs/OPERATIONS.md: tear down).
  force_destroy = false

  # DocumentUploaded reads the object at the generation named in the event, not the latest one. Versioning keeps
  # an overwritten or deleted generation readable while Eventarc may still (re)deliver its event (up to a day).
  versioning {
    enabled = true
  }

  lifecycle_rule {
    condition {
      days_since_noncurrent_time = 7
    }
    action {
      type = "Delete"
    }
  }

  # Retention of the documents themselves (var.inbox_retention_days; null: kept). Invoices may name people: keep them
  # no longer than the law of your books asks.
  dynamic "lifecycle_rule" {
    for_each = var.inbox_retention_days == null ? [] : [var.inbox_retention_days]
    content {
      condition {
        age = lifecycle_rule.value
      }
      action {
        type = "Delete"
      }
    }
  }

  depends_on = [google_project_service.apis]
}

resource "google_storage_bucket" "sources" {
  name     = local.sources_bucket
  project  = var.project_id
  location = var.region
  labels   = local.labels

  uniform_bucket_level_access = true
  public_access_prevention    = "enforced"
  force_destroy               = true # holds only build inputs that `terraform apply` recreates

  depends_on = [google_project_service.apis]
}

locals {
  # The shaded jar `mvn -pl functions -am package` writes; the check below insists there is exactly one.
  jar_candidates = var.functions_jar != null ? [var.functions_jar] : [
    for f in fileset("${path.module}/../functions/target", "once-functions-*-deploy.jar") : "${path.module}/../functions/target/${f}"
  ]
}

# The deployable source: a zip whose root holds exactly one jar and no pom.xml. Google's Java buildpack then
# takes the jar as an already-built function ("function has no pom.xml" → a single *.jar is the classpath) and
# adds the Functions Framework invoker; nothing is compiled in Cloud Build. The jar is built reproducibly
# (project.build.outputTimestamp), so an unchanged tree gives the same zip and the same object name.
data "archive_file" "functions" {
  type             = "zip"
  source_file      = length(local.jar_candidates) == 1 ? local.jar_candidates[0] : null
  output_path      = "${path.module}/../functions/target/terraform/once-functions.zip"
  output_file_mode = "0644"

  lifecycle {
    precondition {
      condition     = length(local.jar_candidates) == 1
      error_message = "Expected exactly one functions/target/once-functions-*-deploy.jar; build it with `mvn -B -pl functions -am package` (run `mvn clean` first if an old version is still there) or set functions_jar."
    }
  }
}

# Named by content hash: a code change is a new object name, which changes build_config of every function and so
# deploys new revisions; an unchanged jar changes nothing.
resource "google_storage_bucket_object" "functions" {
  name         = "functions/once-functions-${data.archive_file.functions.output_sha256}.zip"
  bucket       = google_storage_bucket.sources.name
  source       = data.archive_file.functions.output_path
  content_type = "application/zip"
}

resource "google_artifact_registry_repository" "functions" {
  project       = var.project_id
  location      = var.region
  repository_id = "${var.name_prefix}-functions"
  format        = "DOCKER"
  description   = "Images Cloud Build makes from the once functions' source (one per deploy)."
  labels        = local.labels

  # Every deploy pushes an image; only the running revisions' images matter.
  cleanup_policies {
    id     = "keep-recent"
    action = "KEEP"
    most_recent_versions {
      keep_count = 10
    }
  }
  cleanup_policies {
    id     = "delete-old"
    action = "DELETE"
    condition {
      older_than = "2592000s" # 30 days
    }
  }

  depends_on = [google_project_service.apis]
}
