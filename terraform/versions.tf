# Provider ranges are pinned to the majors whose schemas this configuration was written against: every argument
# used here exists in google/google-beta 6.x and 7.x (build_config.service_account, docker_repository, PromQL alert
# conditions, replication.auto). A new major may rename arguments, so it needs a deliberate bump and a plan review.
terraform {
  required_version = ">= 1.5.0, < 2.0.0"

  required_providers {
    google = {
      source  = "hashicorp/google"
      version = ">= 6.0, < 8.0"
    }
    # Only for google_project_service_identity (the Pub/Sub service agent), which the GA provider documents as beta.
    google-beta = {
      source  = "hashicorp/google-beta"
      version = ">= 6.0, < 8.0"
    }
    # Zips the prebuilt jar for the Cloud Functions source upload.
    archive = {
      source  = "hashicorp/archive"
      version = ">= 2.4, < 3.0"
    }
  }
}

provider "google" {
  project = var.project_id
  region  = var.region
}

provider "google-beta" {
  project = var.project_id
  region  = var.region
}
