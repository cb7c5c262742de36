# The Google providers: 6.33 or newer, 6.x or 7.x. 6.33 is the oldest with what this configuration uses
# (build_config.service_account, docker_repository, PromQL alert conditions with disable_metric_validation,
# replication.auto). 7.x is what a fresh `terraform init` installs and what other modules of a root module may
# require; nothing here differs between the two majors (docs/DEPLOY.md: provider versions), so a root module pinned
# to the last 6.x keeps working too. Each admitted major was checked: 7 on every build, by terraform/check's
# SchemaCheck against the 7.x schema it holds; 6 by review (up to 6.50.0). A new major may rename
# or remove arguments: admitting it takes a schema of it, a plan review, and its major in
# ProviderVersionCheck.CHECKED_MAJORS, which fails while a range admits an unchecked major.
#
# State: local by default. For a team, keep it in a GCS bucket: copy backend.tf.example to backend.tf (docs/DEPLOY.md).
terraform {
  required_version = ">= 1.5.0, < 2.0.0"

  required_providers {
    google = {
      source  = "hashicorp/google"
      version = ">= 6.33, < 8.0"
    }
    # Only for google_project_service_identity (the Eventarc and Pub/Sub service agents), which the GA provider
    # documents as beta.
    google-beta = {
      source  = "hashicorp/google-beta"
      version = ">= 6.33, < 8.0"
    }
    # time_sleep: lets new service agents' roles propagate before the triggers that use them (agents.tf).
    time = {
      source  = "hashicorp/time"
      version = ">= 0.9, < 1.0"
    }
    # Zips the prebuilt jar for the Cloud Functions source upload.
    archive = {
      source  = "hashicorp/archive"
      version = ">= 2.4, < 3.0"
    }
  }
}

# user_project_override + billing_project: APIs that bill the caller's quota project (Firebase Rules, Billing
# Budgets) refuse user credentials without one ("requires a quota project"); with these, every call names this
# project. Whoever applies therefore needs serviceusage.services.use on it (Owner and Editor have it).
provider "google" {
  project               = var.project_id
  region                = var.region
  user_project_override = true
  billing_project       = var.project_id
}

provider "google-beta" {
  project               = var.project_id
  region                = var.region
  user_project_override = true
  billing_project       = var.project_id
}
