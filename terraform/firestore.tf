# The (default) database the code opens (it names no database), the TTL policies of the ledger and of the spending
# guard's markers, index exemptions, and rules that shut out the client SDKs.

resource "google_firestore_database" "default" {
  project     = var.project_id
  name        = "(default)"
  location_id = local.firestore_location
  type        = "FIRESTORE_NATIVE"

  # The ledger is what makes effects happen once: losing it replays every retained event's side effects.
  # Deleting it takes a deliberate step (docs/OPERATIONS.md: tear down); `terraform destroy` leaves it in place.
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
#   analyses.job       where job ==                         (RecordQueries.submittedTo, once inspect)
#   analyses.status    where status == … order by __name__  (RecordQueries.pendingSubmissions, and .gathered: the
#                      documents the reconciler checks against their gatherings; __name__ is implicit)
#   analyses (status, deferredAt)  where status == "deferred" order by deferredAt  (RecordQueries.deferred: the
#                      reconciler resumes deferred documents oldest first; composite index below)
#   analyses (status, queuedAt)  where status == "queued" order by queuedAt  (RecordQueries.queued: batch mode's
#                      queue, oldest first; composite index below)
#   analyses.batch     where batch ==                       (RecordQueries.gatheredIn: a gathering's documents)
#   gatherings (inFlight, openedAt)  where inFlight == true and openedAt <= …  (Gatherings.open: the jobs in flight
#                      opened before one, counted; composite index below)
#   gatherings.inFlight, gatherings.state  where inFlight == / state ==  (Gatherings: the jobs in flight, counted;
#                      the submissions to resume)
#   analyses.key       where key ==                         (the demo's StackClient)
#   billing.key        where key ==                         (once inspect, the demo)
#   idempotency.state  where state == "CLAIMED" order by __name__  (once stuck), ascending only, below
# A query that filters one field and ranges or orders on another needs a composite index (google_firestore_index,
# below); its fields may still be exempted from single-field indexing.
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

# The functions read the ledger by document id only (the id is the hash of key and effect); only `once stuck` queries
# it, below.
resource "google_firestore_field" "ledger_unindexed" {
  for_each = toset([
    "key",
    "effect",
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
    "gaveUp",
    "calls",
    "releasedBy",
    "releasedAt",
    "releaseReason",
    "nonce",
    "generation",
    "history",
  ])

  project    = var.project_id
  database   = google_firestore_database.default.name
  collection = local.ledger_collection
  field      = each.value

  index_config {}
}

# `once stuck` lists the claims still held: state == "CLAIMED", in document-id order. One ascending single-field
# index serves it. Its entries are (state, id) with hashed ids, so they spread over the index rather than pile up at
# one end, and a ledger write pays one index entry, not a composite's. A composite on (state, leaseExpiresAt) would
# let Firestore pick the expired claims itself, but its entries grow at one end with time, the hotspot Firestore
# warns of for sequential indexed values, on the write every delivery makes; claims held at any moment are few (the
# deliveries in flight and the ones in trouble), so the tool reads them all and judges each lease itself.
resource "google_firestore_field" "ledger_state" {
  project    = var.project_id
  database   = google_firestore_database.default.name
  collection = local.ledger_collection
  field      = "state"

  index_config {
    indexes {
      order       = "ASCENDING"
      query_scope = "COLLECTION"
    }
  }
}

# `once stuck` and `once stats` query the analyses by time: documents still submitted to a batch job before a cut-off
# (there can be many while batch jobs run), and documents deferred by the spending guard, oldest first. updatedAt and
# deferredAt keep no single-field index of their own (exempted above, or not written yet).
resource "google_firestore_index" "analyses_status_updated" {
  project     = var.project_id
  database    = google_firestore_database.default.name
  collection  = "analyses"
  query_scope = "COLLECTION"

  fields {
    field_path = "status"
    order      = "ASCENDING"
  }
  fields {
    field_path = "updatedAt"
    order      = "ASCENDING"
  }
}

# The reconciler's queue of deferred documents (and once stuck's): status == "deferred", oldest deferredAt first.
# deferredAt itself needs no single-field index (the composite serves the query), so it is exempted below.
resource "google_firestore_index" "analyses_status_deferred" {
  project     = var.project_id
  database    = google_firestore_database.default.name
  collection  = "analyses"
  query_scope = "COLLECTION"

  fields {
    field_path = "status"
    order      = "ASCENDING"
  }
  fields {
    field_path = "deferredAt"
    order      = "ASCENDING"
  }
}

# Batch mode's queue (BatchSubmitter): status == "queued", oldest queuedAt first, a job's worth at a time.
resource "google_firestore_index" "analyses_status_queued" {
  project     = var.project_id
  database    = google_firestore_database.default.name
  collection  = "analyses"
  query_scope = "COLLECTION"

  fields {
    field_path = "status"
    order      = "ASCENDING"
  }
  fields {
    field_path = "queuedAt"
    order      = "ASCENDING"
  }
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
    "queuedAt",
    "size",
    "rerun",
    "duplicateOf",
    "duplicateOfAnalysisId",
    "waitingFor",
    "reruns",
    "jobLimit",
    "requestedModel",
    "rerouted",
    "truncated",
    "tries",
    # a subfield of tries' entries (covered by the exemption of tries on Firestore; the offline check reads every name)
    "try",
  ])

  project    = var.project_id
  database   = google_firestore_database.default.name
  collection = "analyses"
  field      = each.value

  index_config {}
}

resource "google_firestore_field" "billing_unindexed" {
  for_each = toset([
    "model",
    "promptTokens",
    "outputTokens",
    "totalTokens",
    "thoughtsTokens",
    "costMicroUsd",
    "priced",
    "batch",
    "billedAt",
    "rerun",
    "requestedModel",
    "rerouted",
    "job",
    "unused",
    "reason",
  ])

  project    = var.project_id
  database   = google_firestore_database.default.name
  collection = "billing"
  field      = each.value

  index_config {}
}

# Batch mode's gatherings (functions/…/pipeline/FirestoreGatherings.java): the cap on jobs in flight counts those
# opened before a new one.
resource "google_firestore_index" "gatherings_in_flight_opened" {
  project     = var.project_id
  database    = google_firestore_database.default.name
  collection  = "gatherings"
  query_scope = "COLLECTION"

  fields {
    field_path = "inFlight"
    order      = "ASCENDING"
  }
  fields {
    field_path = "openedAt"
    order      = "ASCENDING"
  }
}

resource "google_firestore_field" "gatherings_unindexed" {
  for_each = toset([
    "openedAt",
    "opener",
    "job",
    "documents",
    "submittedAt",
    "members",
    "sealedAt",
    "refused",
    "inputFile",
    "requests",
    "notFoundAt",
    "unattributed",
    # unattributed's subfields: an exemption of a map field covers them on Firestore, but the offline check reads
    # every name a writer's maps hold, nested or not; these four exempt top-level names no document has.
    "answers",
    "costMicroUsd",
    "promptTokens",
    "outputTokens",
  ])

  project    = var.project_id
  database   = google_firestore_database.default.name
  collection = "gatherings"
  field      = each.value

  index_config {}
}


# TTL of the invoice data: with records_retention_days, every analysis and bill carries expireAt (its last write plus
# that many days) and Firestore deletes it some time after. Without, no document carries the field and nothing is
# deleted. Never queried, so exempted too.
resource "google_firestore_field" "analyses_expire_at" {
  project    = var.project_id
  database   = google_firestore_database.default.name
  collection = "analyses"
  field      = "expireAt"

  ttl_config {}
  index_config {}
}

resource "google_firestore_field" "billing_expire_at" {
  project    = var.project_id
  database   = google_firestore_database.default.name
  collection = "billing"
  field      = "expireAt"

  ttl_config {}
  index_config {}
}

# TTL: Firestore deletes a spending guard's marker (one per reservation and per step-back, beside the counters) some
# time after its expireAt, a day after its commit: it only has to outlive the client's resends of that commit. The
# counters have no expireAt and are kept: they are what each day cost. Never queried, so exempted too.
resource "google_firestore_field" "budget_expire_at" {
  project    = var.project_id
  database   = google_firestore_database.default.name
  collection = "budget"
  field      = "expireAt"

  ttl_config {}
  index_config {}
}

# The spending guard's counters and markers (core/…/budget/SpendCounters.java): changed by increments (the markers:
# created once), read by id, and the day's total summed in one aggregation over its counters (SpendCounters.read: day ==
# the day, ordered by the summed fields; one read billed, where reading the 16 counters bills 16). This composite
# serves it, and holds the counters only (the markers lack the summed fields); the fields' single-field indexes are not
# needed, so they are exempted below. Without the index the functions read the counters by id.
resource "google_firestore_index" "budget_day_sums" {
  project     = var.project_id
  database    = google_firestore_database.default.name
  collection  = "budget"
  query_scope = "COLLECTION"

  fields {
    field_path = "day"
    order      = "ASCENDING"
  }
  fields {
    field_path = "spentMicroUsd"
    order      = "ASCENDING"
  }
  fields {
    field_path = "reservedMicroUsd"
    order      = "ASCENDING"
  }
}

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
