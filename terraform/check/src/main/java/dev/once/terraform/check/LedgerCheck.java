package dev.once.terraform.check;

import dev.once.budget.SpendCounters;
import dev.once.config.OnceSetting;
import dev.once.firestore.FirestoreLedger;
import dev.once.pipeline.RecordWrites;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The Firestore side matches the ledger: a TTL policy sits on the field the ledger writes
 * ({@link FirestoreLedger#EXPIRE_AT}) of the collection the code uses by default
 * ({@code OnceSetting.ONCE_COLLECTION}), and one on the field the spending guard writes to its markers
 * ({@link SpendCounters#EXPIRE_AT} in {@link SpendCounters#COLLECTION}), and no other; every function that sets
 * ONCE_COLLECTION sets that collection; and the database is the (default) one, the only one the code opens. That the
 * code writes those fields is {@link FirestoreIndexCheck}'s (every exemption names a field the code writes).
 */
public final class LedgerCheck implements Check {
  private static final String DEFAULT_DATABASE = "(default)";

  private final String collection;
  private final String ttlField;
  private final String markers;
  private final String markerTtlField;
  /** collection.field of the pipeline's own expiring documents (analyses and bills, RECORDS_RETENTION_DAYS). */
  private final Set<String> recordTtls;

  public LedgerCheck(String collection, String ttlField, String markers, String markerTtlField) {
    this(collection, ttlField, markers, markerTtlField, Set.of());
  }

  public LedgerCheck(String collection, String ttlField, String markers, String markerTtlField,
      Set<String> recordTtls) {
    this.collection = collection;
    this.ttlField = ttlField;
    this.markers = markers;
    this.markerTtlField = markerTtlField;
    this.recordTtls = Set.copyOf(recordTtls);
  }

  public static LedgerCheck forCode() {
    return new LedgerCheck(OnceSetting.ONCE_COLLECTION.defaultValue(), FirestoreLedger.EXPIRE_AT,
        SpendCounters.COLLECTION, SpendCounters.EXPIRE_AT,
        Set.of(RecordWrites.ANALYSES + "." + RecordWrites.EXPIRE_AT,
            RecordWrites.BILLING + "." + RecordWrites.EXPIRE_AT));
  }

  @Override
  public List<Finding> findings(TerraformConfig config) {
    List<Finding> findings = new ArrayList<>();
    int ledgerTtl = 0;
    int markerTtl = 0;
    for (Block field : config.resources("google_firestore_field")) {
      Optional<String> fieldCollection = config.literal(field.body().path("collection"));
      Optional<String> fieldName = config.literal(field.body().path("field"));
      Optional<String> database = config.literal(field.body().path("database"));
      if (database.isPresent() && !database.get().equals(DEFAULT_DATABASE)) {
        findings.add(new Finding(field.file(), field.address(), "configures database " + database.get()
            + ", but the code opens the (default) database.",
            "use database = \"(default)\" (or the default database resource's name)."));
      }
      if (!field.body().has("ttl_config")) {
        continue;
      }
      if (fieldCollection.isEmpty() || fieldName.isEmpty()) {
        findings.add(new Finding(field.file(), field.address(),
            "has a TTL policy whose collection or field is computed.",
            "write collection and field as literals or locals with literal values, so the check can compare them."));
      } else if (fieldCollection.get().equals(collection) && fieldName.get().equals(ttlField)) {
        ledgerTtl++;
      } else if (fieldCollection.get().equals(markers) && fieldName.get().equals(markerTtlField)) {
        markerTtl++;
      } else if (!recordTtls.contains(fieldCollection.get() + "." + fieldName.get())) {
        findings.add(new Finding(field.file(), field.address(), "puts a TTL policy on " + fieldCollection.get() + "."
            + fieldName.get()
            + ", but the ledger writes its expiry to " + collection + "." + ttlField
            + " (OnceSetting.ONCE_COLLECTION default, FirestoreLedger.EXPIRE_AT), and the spending guard its markers' to "
            + markers + "." + markerTtlField + " (SpendCounters.EXPIRE_AT).",
            "set collection = \"" + collection + "\" and field = \"" + ttlField + "\"."));
      }
    }
    if (ledgerTtl == 0) {
      String where =
          config.resources("google_firestore_field").stream().map(Block::file).findFirst().orElse("firestore.tf");
      findings.add(new Finding(where, "google_firestore_field", "no TTL policy on " + collection + "." + ttlField
          + ": finished ledger records would be kept forever.",
          "add a google_firestore_field with collection \"" + collection + "\", field \"" + ttlField
              + "\" and ttl_config {}."));
    }
    if (markerTtl == 0) {
      String where =
          config.resources("google_firestore_field").stream().map(Block::file).findFirst().orElse("firestore.tf");
      findings.add(new Finding(where, "google_firestore_field", "no TTL policy on " + markers + "." + markerTtlField
          + ": the spending guard's markers (one per reservation and per step-back) would be kept forever.",
          "add a google_firestore_field with collection \"" + markers + "\", field \"" + markerTtlField
              + "\" and ttl_config {}."));
    }
    for (Block function : config.resources("google_cloudfunctions2_function")) {
      var value =
          function.nested("service_config").path("environment_variables").path(OnceSetting.ONCE_COLLECTION.name());
      if (value.isMissingNode()) {
        continue;
      }
      Optional<String> set = config.literal(value);
      if (!set.equals(Optional.of(collection))) {
        findings.add(new Finding(function.file(), function.address(),
            "sets ONCE_COLLECTION to " + set.orElse(value.asText())
                + ", but the TTL policy and the code's default are on " + collection + ".",
            "set ONCE_COLLECTION = local.ledger_collection (\"" + collection + "\")."));
      }
    }
    for (Block database : config.resources("google_firestore_database")) {
      Optional<String> name = config.literal(database.body().path("name"));
      if (!name.equals(Optional.of(DEFAULT_DATABASE))) {
        findings.add(new Finding(database.file(), database.address(), "creates database " + name.orElse("(computed)")
            + ", but the code opens the (default) database (FirestoreClients names none).",
            "set name = \"(default)\"."));
      }
    }
    return findings;
  }
}
