# The (default) database the code opens (it names no database), the ledger's TTL policy and index exemptions,
# and rules that shut out the client SDKs.

resource "google_firestore_database" "default" {
  project     = var.project_id
  name        = "(default)"
  location_id = local.firestore_location
  type        = "FIRESTORE_NATIVE"

  # The ledger is what makes effects happen once: losing it replays every retained event's side effects.
  # Deleting it takes a deliberate step (README: tear down); `terraform destroy` leaves it in place.
  delete_protection_state = "DELETE_PROTECTION_ENABLED"
  deletion_policy         = "ABANDON"

  depends_on = [google_project_service.apis]
}

# Indexes. Firestore keeps two single-field indexes (ascending, descending) on every field and, for a map, on every
# subfield, unless a field is exempted. An index costs a write per document write, and one on a monotonically
# increasing value (a timestamp, a counter) caps writes to the whole collection at about 500 per second
# (Firestore's documented hotspot limit). So every field that no query needs is exempted (an empty index_config),
# and an exemption on a map field covers its subfields (Firestore: index overview, single-field index exemptions),
# so `invoice`, `usage`, `source` and `outcome` take one exemption each.
#
# Exemptions are per field: the collection-wide `*` exemption Firestore documents cannot be created with
# google_firestore_field (hashicorp/terraform-provider-google#19598, open), and a database holds at most 200.
# Several exemptions of one collection are applied concurrently; the provider retries Firestore's 409 "underlying
# data changed" (GoogleCloudPlatform/magic-modules#9329).
#
# Kept indexed, because the code queries them (terraform/check derives this list from the Java sources and fails
# when an exemption or an index disagrees with it):
#   analyses.job     where job ==                         (Records.submittedTo, dev/inspect)
#   analyses.status  where status == … order by __name__  (Records.pendingSubmissions; __name__ is implicit)
#   analyses (status, deferredAt)  where status == "deferred" order by deferredAt  (RecordQueries.deferred: the
#                    reconciler resumes deferred documents oldest first; composite index below)
#   analyses.key     where key ==                         (the demo's StackClient)
#   billing.key      where key ==                         (dev/inspect, the demo)
# A query that filters one field and ranges or orders on another needs a composite index (google_firestore_index,
# below when there is one); its fields may still be exempted from single-field indexing.
#
# Adding a field the code writes is one line in the list of its collection.

# TTL: Firestore deletes a ledger record some time after its expireAt (last write + ONCE_RETENTION_DAYS). expireAt is
# only read by the TTL service, never queried, so it is exempted too.
resource "google_firestore_field" "ledger_expire_at" {
  project    = var.project_id
  database   = google_firestore_database.default.name
  collection = local.ledger_collection
  field      = "expireAt"

  ttl_config {}
  index_config {}
}

# The ledger is read by document id only (the id is the hash of key and effect).
resource "google_firestore_field" "ledger_unindexed" {
  for_each = toset([
    "key",
    "effect",
    "state",
    "token",
    "attempts",
    "leaseExpiresAt",
    "fingerprint",
    "error",
    "outcome",
    "createdAt",
    "updatedAt",
    "finishedAt",
    "spent",
    "calls",
    "releasedBy",
    "releasedAt",
    "releaseReason",
  ])

  project    = var.project_id
  database   = google_firestore_database.default.name
  collection = local.ledger_collection
  field      = each.value

  index_config {}
}

resource "google_firestore_field" "analyses_unindexed" {
  for_each = toset([
    "reason",
    "invoice",
    "model",
    "usage",
    "source",
    "mode",
    "updatedAt",
    "deferredAt",
    "reservation",
  ])

  project    = var.project_id
  database   = google_firestore_database.default.name
  collection = "analyses"
  field      = each.value

  index_config {}
}

# The reconciler's queue of deferred documents: status == "deferred", oldest deferredAt first. deferredAt itself needs
# no single-field index (the composite serves the query), so it is exempted above like the other timestamps.
resource "google_firestore_index" "analyses_deferred" {
  project    = var.project_id
  database   = google_firestore_database.default.name
  collection = "analyses"

  fields {
    field_path = "status"
    order      = "ASCENDING"
  }

  fields {
    field_path = "deferredAt"
    order      = "ASCENDING"
  }
}

resource "google_firestore_field" "billing_unindexed" {
  for_each = toset([
    "model",
    "promptTokens",
    "outputTokens",
    "totalTokens",
    "costMicroUsd",
    "priced",
    "batch",
    "billedAt",
  ])

  project    = var.project_id
  database   = google_firestore_database.default.name
  collection = "billing"
  field      = each.value

  index_config {}
}

# The spending guard's counters (shared/…/budget/SpendCounters.java): read by id only, changed by increments.
resource "google_firestore_field" "budget_unindexed" {
  for_each = toset([
    "day",
    "spentMicroUsd",
    "reservedMicroUsd",
    "updatedAt",
  ])

  project    = var.project_id
  database   = google_firestore_database.default.name
  collection = "budget"
  field      = each.value

  index_config {}
}

resource "google_firebaserules_ruleset" "firestore" {
  project = var.project_id

  source {
    files {
      name    = "firestore.rules"
      content = file("${path.module}/firestore.rules")
    }
  }

  # A ruleset in use by a release cannot be deleted: create the new one and move the release first.
  lifecycle {
    create_before_destroy = true
  }

  depends_on = [google_firestore_database.default]
}

resource "google_firebaserules_release" "firestore" {
  project      = var.project_id
  name         = "cloud.firestore" # the release name Firestore serves for the (default) database
  ruleset_name = "projects/${var.project_id}/rulesets/${google_firebaserules_ruleset.firestore.name}"
}
