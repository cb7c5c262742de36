package dev.once.terraform.check;

import com.fasterxml.jackson.databind.JsonNode;
import dev.once.config.OnceSetting;
import dev.once.terraform.check.FirestoreUse.Query;
import dev.once.terraform.check.FirestoreUse.Term;
import dev.once.terraform.check.FirestoreUse.Use;
import dev.once.terraform.check.FirestoreUse.Writer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Firestore's indexes agree with the queries the code runs ({@link FirestoreUse} reads them from the sources):
 * <ul>
 *   <li>a field a query needs a single-field index on is not exempted (nor is the map holding it);
 *   <li>a query that filters or orders on more than one field has its composite index, and every composite index
 *       serves a query and is declared once;
 *   <li>every field the code writes that no query needs is exempted (an index costs a write per document, and one
 *       on an increasing value caps the collection at ~500 writes/s), and every exemption names a field the code
 *       writes.
 * </ul>
 * Single-field needs follow Firestore's rules: equalities alone are served by the automatic indexes (merged when
 * there are several), as is one range or ordering alone; an equality with a range or an ordering on another
 * field, or two of those, needs a composite index (equality fields first, then the range or ordered fields), whose
 * fields need no single-field index of their own. The document id ({@code __name__}) is always indexed.
 */
public final class FirestoreIndexCheck implements Check {
  private final FirestoreUse use;
  private final List<Finding> sourceProblems;

  public FirestoreIndexCheck(FirestoreUse use, List<Finding> sourceProblems) {
    this.use = use;
    this.sourceProblems = List.copyOf(sourceProblems);
  }

  /** The check against the code in {@code root}: every module that runs against Google (see {@link JavaSources}). */
  public static FirestoreIndexCheck forCode(Path root) {
    JavaSources java = JavaSources.of(root);
    return new FirestoreIndexCheck(new FirestoreUse(java, OnceSetting.ONCE_COLLECTION.defaultValue()), java.problems());
  }

  /** A single-field override in Terraform. {@code indexes} empty: exempted. */
  private record FieldOverride(String collection, String field, Set<String> indexes, Block block, String address) {
    boolean exempts(Use needed) {
      return !indexes
          .contains(needed == Use.DESCENDING ? "DESCENDING" : needed == Use.ARRAY ? "CONTAINS" : "ASCENDING");
    }
  }

  /** A composite index in Terraform: its fields as "field ORDER", its scope (COLLECTION unless said otherwise). */
  private record Composite(String collection, String scope, List<String> fields, Block block) {
    boolean sameIndexAs(Composite other) {
      return collection.equals(other.collection) && scope.equals(other.scope) && fields.equals(other.fields);
    }
  }

  /** What one query needs: single-field indexes, or one composite index. */
  private record Need(Query query, List<Term> singles, List<String> composite) {}

  @Override
  public List<Finding> findings(TerraformConfig config) {
    List<Finding> findings = new ArrayList<>(sourceProblems);
    for (var unresolved : use.unresolved()) {
      findings.add(new Finding(file(unresolved.where()), line(unresolved.where()),
          "opens a Firestore collection the check cannot name: "
              + unresolved.expression() + ", so its indexes are not checked.",
          "name the collection with a string literal or a static final String constant (directly, or through a variable, field or parameter in the same file)."));
    }
    List<FieldOverride> overrides = overrides(config, findings);
    List<Composite> composites = composites(config, findings);
    List<Need> needs = use.queries().stream().map(FirestoreIndexCheck::need).toList();

    Map<String, Set<String>> queried = new LinkedHashMap<>(); // collection -> fields a single-field index serves
    for (Need need : needs) {
      for (Term term : need.singles()) {
        queried.computeIfAbsent(need.query().collection(), c -> new LinkedHashSet<>()).add(term.field());
        for (FieldOverride o : overrides) {
          if (o.collection().equals(need.query().collection()) && covers(o.field(), term.field(), overrides)
              && o.exempts(term.use())) {
            findings.add(new Finding(o.block().file(), o.address(), "exempts " + o.collection() + "." + o.field()
                + " from " + (o.indexes().isEmpty() ? "indexing" : "this index") + ", but " + need.query().where()
                + " queries " + describe(need.query()) + ", which needs the single-field index on " + term.field()
                + ".",
                "stop exempting " + o.field() + " (remove it from the list), or change the query."));
          }
        }
      }
      if (!need.composite().isEmpty() && composites.stream().noneMatch(c -> matches(c, need))) {
        String where =
            config.resources("google_firestore_field").stream().map(Block::file).findFirst().orElse("firestore.tf");
        findings.add(new Finding(where, "google_firestore_index", need.query().where() + " queries "
            + describe(need.query()) + ", which needs a composite index (" + String.join(", ", need.composite())
            + ") on " + need.query().collection() + "; none is declared, so Firestore refuses the query.",
            "add a google_firestore_index with collection \"" + need.query().collection()
                + "\" and those fields, in that order."));
      }
    }
    for (int i = 0; i < composites.size(); i++) {
      Composite composite = composites.get(i);
      composites.subList(0, i).stream().filter(composite::sameIndexAs).findFirst()
          .ifPresent(first -> findings.add(new Finding(composite.block().file(), composite.block().address(),
              "declares the same index as "
                  + first.block().address() + " (" + composite.collection() + ": "
                  + String.join(", ", composite.fields())
                  + "): Firestore refuses the second create (409, the index already exists), so a first apply fails.",
              "delete one of them.")));
    }
    for (Composite composite : composites) {
      if (needs.stream().noneMatch(n -> !n.composite().isEmpty() && matches(composite, n))) {
        findings.add(new Finding(composite.block().file(), composite.block().address(),
            "indexes " + composite.collection()
                + " (" + String.join(", ", composite.fields()) + "), which no query of the code needs.",
            "delete it (every write to " + composite.collection() + " pays for it)."));
      }
    }
    checkWrittenFields(overrides, queried, findings, config);
    return findings;
  }

  /** Fields written but neither queried nor exempted; exemptions of fields nobody writes. */
  private void checkWrittenFields(List<FieldOverride> overrides, Map<String, Set<String>> queried,
      List<Finding> findings,
      TerraformConfig config) {
    for (Writer writer : use.writers()) {
      for (String field : writer.fields()) {
        boolean decided = writer.collections().stream().anyMatch(c -> queried.getOrDefault(c, Set.of()).contains(field)
            || overrides.stream()
                .anyMatch(o -> o.collection().equals(c) && o.field().equals(field) && o.indexes().isEmpty()));
        if (!decided) {
          String collections = String.join(" or ", writer.collections());
          Optional<FieldOverride> sibling = overrides.stream().filter(o -> writer.collections().contains(o.collection())
              && o.indexes().isEmpty() && o.block().body().has("for_each")).findFirst();
          findings.add(new Finding(writer.file(), collections + "." + field, "is written (to " + collections
              + ") and no query needs it, but it is not exempted from indexing: Firestore indexes it on every write,"
              + " and an increasing value caps the collection at about 500 writes per second.",
              "add \"" + field + "\" to the exempted fields of its collection"
                  + sibling.map(o -> " (" + o.block().address() + " in " + o.block().file() + ")")
                      .orElse(" in firestore.tf")
                  + ", or query it."));
        }
      }
    }
    for (FieldOverride o : overrides) {
      boolean written = use.writers().stream().anyMatch(w -> w.collections().contains(o.collection())
          && w.fields().contains(o.field()));
      if (o.indexes().isEmpty() && !written) {
        findings.add(new Finding(o.block().file(), o.address(), "exempts " + o.collection() + "." + o.field()
            + ", which the code never writes" + (use.collections().contains(o.collection()) ? "" : " (no code uses "
                + o.collection() + " at all)")
            + ".", "delete it, or correct the name."));
      }
    }
  }

  /** The override on {@code overridden} applies to {@code field}: the same field, or a map holding it with no override of its own. */
  private static boolean covers(String overridden, String field, List<FieldOverride> all) {
    if (overridden.equals(field)) {
      return true;
    }
    return field.startsWith(overridden + ".") && all.stream().noneMatch(o -> o.field().equals(field));
  }

  static Need need(Query query) {
    List<Term> equalities = new ArrayList<>();
    List<Term> others = new ArrayList<>(); // inequalities first, then orderings, each field once
    Set<String> seen = new LinkedHashSet<>();
    for (Term term : query.terms()) {
      if (term.field().equals(FirestoreUse.DOCUMENT_ID)) {
        continue;
      }
      if (term.use() == Use.EQUALITY || term.use() == Use.ARRAY) {
        equalities.add(term);
      } else if (term.use() == Use.INEQUALITY && seen.add(term.field())) {
        others.add(0, new Term(term.field(), Use.ASCENDING));
      }
    }
    for (Term term : query.terms()) {
      if ((term.use() == Use.ASCENDING || term.use() == Use.DESCENDING)
          && !term.field().equals(FirestoreUse.DOCUMENT_ID)) {
        if (seen.add(term.field())) {
          others.add(term);
        } else {
          others.replaceAll(t -> t.field().equals(term.field()) ? term : t); // a range ordered descending
        }
      }
    }
    if (others.isEmpty()) {
      return new Need(query, equalities, List.of());
    }
    if (equalities.isEmpty() && others.size() == 1) {
      return new Need(query, others, List.of());
    }
    List<String> composite = new ArrayList<>();
    equalities.stream().map(t -> t.field() + (t.use() == Use.ARRAY ? " CONTAINS" : " ASCENDING")).distinct()
        .forEach(composite::add);
    others.forEach(t -> composite.add(t.field() + " " + t.use().name()));
    return new Need(query, List.of(), composite);
  }

  /** Equality fields may come in any order, the rest in the query's. */
  private static boolean matches(Composite index, Need need) {
    if (!index.collection().equals(need.query().collection()) || index.fields().size() != need.composite().size()) {
      return false;
    }
    long equalities = need.composite().stream().filter(f -> need.query().terms().stream()
        .anyMatch(t -> (t.use() == Use.EQUALITY || t.use() == Use.ARRAY) && f.startsWith(t.field() + " "))).count();
    int n = (int) equalities;
    return Set.copyOf(index.fields().subList(0, n)).equals(Set.copyOf(need.composite().subList(0, n)))
        && index.fields().subList(n, index.fields().size())
            .equals(need.composite().subList(n, need.composite().size()));
  }

  private static String describe(Query query) {
    return query.collection() + " where " + query.terms().stream().map(t -> switch (t.use()) {
      case EQUALITY -> t.field() + " ==";
      case INEQUALITY -> t.field() + " <>";
      case ARRAY -> t.field() + " contains";
      case ASCENDING -> "order by " + t.field();
      case DESCENDING -> "order by " + t.field() + " desc";
    }).collect(Collectors.joining(", "));
  }

  private static List<FieldOverride> overrides(TerraformConfig config, List<Finding> findings) {
    List<FieldOverride> overrides = new ArrayList<>();
    for (Block block : config.resources("google_firestore_field")) {
      JsonNode indexConfig = block.body().path("index_config");
      if (indexConfig.isMissingNode()) {
        continue; // a TTL policy alone changes no index
      }
      Set<String> indexes = new LinkedHashSet<>();
      for (JsonNode item : TerraformConfig.asList(indexConfig.isArray() ? indexConfig.path(0) : indexConfig)) {
        for (JsonNode index : TerraformConfig.asList(item.path("indexes"))) {
          indexes.add(index.has("array_config") ? "CONTAINS" : index.path("order").asText("ASCENDING"));
        }
      }
      Optional<String> collection = config.literal(block.body().path("collection"));
      String fieldExpression = block.body().path("field").asText();
      List<String> fields = new ArrayList<>();
      boolean perKey = fieldExpression.equals("${each.value}") || fieldExpression.equals("${each.key}");
      if (perKey) {
        ReferenceCheck.forEachKeys(config, block.body().path("for_each")).ifPresent(fields::addAll);
      } else {
        config.literal(block.body().path("field")).ifPresent(fields::add);
      }
      if (collection.isEmpty() || fields.isEmpty()) {
        findings.add(new Finding(block.file(), block.address(),
            "configures a field whose collection or name the check cannot read.",
            "write collection as a literal (or a local with a literal value) and field as a literal or each.value of a literal toset([...])."));
        continue;
      }
      for (String field : fields) {
        overrides.add(new FieldOverride(collection.get(), field, indexes, block,
            perKey ? block.address() + "[\"" + field + "\"]" : block.address()));
      }
    }
    return overrides;
  }

  private static List<Composite> composites(TerraformConfig config, List<Finding> findings) {
    List<Composite> composites = new ArrayList<>();
    for (Block block : config.resources("google_firestore_index")) {
      Optional<String> collection = config.literal(block.body().path("collection"));
      List<String> fields = new ArrayList<>();
      for (JsonNode field : TerraformConfig.asList(block.body().path("fields"))) {
        Optional<String> path = config.literal(field.path("field_path"));
        path.filter(p -> !p.equals(FirestoreUse.DOCUMENT_ID)).ifPresent(p -> fields.add(p + " "
            + (field.has("array_config") ? "CONTAINS" : field.path("order").asText("ASCENDING"))));
      }
      if (collection.isEmpty() || fields.isEmpty()) {
        findings.add(new Finding(block.file(), block.address(),
            "declares an index whose collection or fields the check cannot read.",
            "write collection and each fields block's field_path and order as literals."));
        continue;
      }
      String scope = config.literal(block.body().path("query_scope")).orElse("COLLECTION");
      composites.add(new Composite(collection.get(), scope, fields, block));
    }
    return composites;
  }

  private static String file(String where) {
    return where.substring(0, where.lastIndexOf(':'));
  }

  private static String line(String where) {
    return "line " + where.substring(where.lastIndexOf(':') + 1);
  }
}
