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

# TTL: Firestore deletes a ledger record some time after its expireAt (last write + ONCE_RETENTION_DAYS).
# expireAt is only ever compared by the TTL service, never queried, so its single-field index goes too: an index on a
# monotonically increasing timestamp is a write hotspot and costs a write per record.
resource "google_firestore_field" "ledger_expire_at" {
  project    = var.project_id
  database   = google_firestore_database.default.name
  collection = local.ledger_collection
  field      = "expireAt"

  ttl_config {}
  index_config {}
}

# The ledger is read by document id only (the id is the hash of key and effect): it runs no query at all, so it needs
# no composite index and none of Firestore's automatic single-field indexes. Exempting the large ones makes every
# claim and completion cheaper: `key` is up to 1 KiB of text, `error` up to 2,000 characters, `outcome` a map
# (indexed field by field), `fingerprint` a hash.
resource "google_firestore_field" "ledger_unindexed" {
  for_each = toset(["key", "error", "outcome", "fingerprint"])

  project    = var.project_id
  database   = google_firestore_database.default.name
  collection = local.ledger_collection
  field      = each.value

  index_config {}

  # Field overrides on one collection group are applied one operation at a time by Firestore.
  depends_on = [google_firestore_field.ledger_expire_at]
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
