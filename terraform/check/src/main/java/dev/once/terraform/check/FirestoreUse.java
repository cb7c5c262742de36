package dev.once.terraform.check;

import com.github.javaparser.ast.Node;
import com.github.javaparser.ast.body.CallableDeclaration;
import com.github.javaparser.ast.body.ClassOrInterfaceDeclaration;
import com.github.javaparser.ast.body.ConstructorDeclaration;
import com.github.javaparser.ast.body.FieldDeclaration;
import com.github.javaparser.ast.body.MethodDeclaration;
import com.github.javaparser.ast.body.Parameter;
import com.github.javaparser.ast.body.VariableDeclarator;
import com.github.javaparser.ast.expr.AssignExpr;
import com.github.javaparser.ast.expr.Expression;
import com.github.javaparser.ast.expr.FieldAccessExpr;
import com.github.javaparser.ast.expr.MethodCallExpr;
import com.github.javaparser.ast.expr.NameExpr;
import com.github.javaparser.ast.expr.ObjectCreationExpr;
import com.github.javaparser.ast.expr.StringLiteralExpr;
import com.github.javaparser.ast.expr.ThisExpr;
import com.github.javaparser.ast.nodeTypes.NodeWithArguments;
import dev.once.terraform.check.JavaSources.Source;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * What the code does with Firestore, read from its syntax: every query (collection, filters, orderings) and, for each
 * file that writes documents, the collections it opens and the top-level field names it writes. Collections and
 * field names are resolved from string literals and {@code static final String} constants, through local
 * variables, fields and a method's parameters (by the arguments of its calls in the same file). A collection named
 * through an accessor {@code x.collection()} is the configured ledger collection ({@code LedgerOptions.collection()},
 * whose default is {@code OnceSetting.ONCE_COLLECTION}'s), and so is the collection of a ledger record built as a
 * {@code RecordWrite}.
 */
public final class FirestoreUse {
  /** How a query uses one field. */
  public enum Use { EQUALITY, INEQUALITY, ARRAY, ASCENDING, DESCENDING }

  /** One condition or ordering of a query; {@code __name__} is the document id. */
  public record Term(String field, Use use) {}

  /**
   * One query as the code writes it.
   *
   * @param where file and line, for messages
   */
  public record Query(String collection, List<Term> terms, String where, String text) {}

  /** A file that writes documents: the collections it opens, the field names it writes. */
  public record Writer(String file, Set<String> collections, Set<String> fields) {}

  /** A collection expression the scan could not resolve. */
  public record Unresolved(String where, String expression) {}

  public static final String DOCUMENT_ID = "__name__";

  private static final Map<String, Use> FILTERS = Map.ofEntries(
      Map.entry("whereEqualTo", Use.EQUALITY), Map.entry("whereIn", Use.EQUALITY),
      Map.entry("whereNotEqualTo", Use.INEQUALITY), Map.entry("whereNotIn", Use.INEQUALITY),
      Map.entry("whereLessThan", Use.INEQUALITY), Map.entry("whereLessThanOrEqualTo", Use.INEQUALITY),
      Map.entry("whereGreaterThan", Use.INEQUALITY), Map.entry("whereGreaterThanOrEqualTo", Use.INEQUALITY),
      Map.entry("whereArrayContains", Use.ARRAY), Map.entry("whereArrayContainsAny", Use.ARRAY),
      // Filter.* of where(Filter)
      Map.entry("equalTo", Use.EQUALITY), Map.entry("inArray", Use.EQUALITY),
      Map.entry("notEqualTo", Use.INEQUALITY), Map.entry("notInArray", Use.INEQUALITY),
      Map.entry("lessThan", Use.INEQUALITY), Map.entry("lessThanOrEqualTo", Use.INEQUALITY),
      Map.entry("greaterThan", Use.INEQUALITY), Map.entry("greaterThanOrEqualTo", Use.INEQUALITY),
      Map.entry("arrayContains", Use.ARRAY), Map.entry("arrayContainsAny", Use.ARRAY));
  private static final Set<String> QUERY_METHODS = Set.of("where", "orderBy");
  private static final Set<String> WRITE_METHODS = Set.of("set", "create", "update", "add");
  private static final Set<String> DOCUMENT_WRITES = Set.of("set", "merge", "create");
  private static final int DEPTH = 6;

  private final JavaSources java;
  private final String ledgerCollection;
  private final List<Query> queries = new ArrayList<>();
  private final List<Writer> writers = new ArrayList<>();
  private final List<Unresolved> unresolved = new ArrayList<>();

  public FirestoreUse(JavaSources java, String ledgerCollection) {
    this.java = java;
    this.ledgerCollection = ledgerCollection;
    for (Source source : java.sources()) {
      scan(source);
    }
  }

  public List<Query> queries() {
    return queries;
  }

  public List<Writer> writers() {
    return writers;
  }

  public List<Unresolved> unresolved() {
    return unresolved;
  }

  /** Every collection the code opens, queries or writes. */
  public Set<String> collections() {
    Set<String> all = new LinkedHashSet<>();
    queries.forEach(q -> all.add(q.collection()));
    writers.forEach(w -> all.addAll(w.collections()));
    return all;
  }

  private void scan(Source source) {
    Set<String> opened = new LinkedHashSet<>();
    boolean store = isStoreAdapter(source);
    boolean adapter = isDocumentWritesAdapter(source) || store;
    for (MethodCallExpr call : source.unit().findAll(MethodCallExpr.class)) {
      if (isCollectionCall(call)) {
        Set<String> names = collectionOf(source, call, 0);
        if (names.isEmpty() && !adapter) {
          unresolved.add(new Unresolved(where(source, call), call.toString()));
        }
        opened.addAll(names);
      }
      if (isDocumentWrite(call)) {
        opened.addAll(collectionOf(source, call, 0));
      }
      if (isRecordWrite(call)) {
        opened.add(ledgerCollection);
      }
      if (isQueryCall(call) && isTopOfChain(call)) {
        addQuery(source, call, store);
      }
      if (isSum(call)) {
        addSum(source, call);
      }
    }
    boolean writes = source.unit().findAll(MethodCallExpr.class).stream()
        .anyMatch(
            c -> WRITE_METHODS.contains(c.getNameAsString()) && c.getScope().isPresent() && c.getArguments().size() >= 1
                || isDocumentWrite(c));
    if (writes && !opened.isEmpty()) {
      writers.add(new Writer(source.path(), opened, writtenFields(source)));
    }
  }

  /**
   * A write through the library's {@code DocumentWrites}: {@code writes.merge(COLLECTION, id, fields)} (also
   * {@code set}, {@code create}), which names its collection as the first argument.
   */
  private static boolean isDocumentWrite(MethodCallExpr call) {
    return DOCUMENT_WRITES.contains(call.getNameAsString()) && call.getArguments().size() == 3
        && call.getScope().isPresent();
  }

  /**
   * A write of a ledger record through the library's store, {@code RecordWrite.create(id, fields)} (also
   * {@code update}): the file that builds it writes the configured ledger collection, whichever store opens it.
   */
  private static boolean isRecordWrite(MethodCallExpr call) {
    return (call.getNameAsString().equals("create") || call.getNameAsString().equals("update"))
        && call.getScope().map(scope -> scope.toString().equals("RecordWrite")).orElse(false);
  }

  /**
   * The library's adapter from {@code DocumentWrites} to Firestore, which opens whatever collection its callers name
   * (their calls are resolved as {@link #isDocumentWrite} writes), so it names none itself.
   */
  private static boolean isDocumentWritesAdapter(Source source) {
    return source.unit().findAll(ClassOrInterfaceDeclaration.class).stream()
        .anyMatch(
            type -> type.getImplementedTypes().stream().anyMatch(t -> t.getNameAsString().equals("DocumentWrites")));
  }

  /**
   * The library's Firestore store ({@code implements RecordStore}), whose sum queries whatever collection its callers
   * name (resolved at the call, {@link #isSum}): a query of it naming no collection is not reported.
   */
  private static boolean isStoreAdapter(Source source) {
    return source.unit().findAll(ClassOrInterfaceDeclaration.class).stream()
        .anyMatch(type -> type.getImplementedTypes().stream().anyMatch(t -> t.getNameAsString().equals("RecordStore")));
  }

  /**
   * A sum through the library's ledger, {@code ledger.sum(COLLECTION, ids, FIELD, value, List.of(F1, F2))}: on
   * Firestore a query on COLLECTION where FIELD == value, ordered by each summed field (the store's aggregation).
   */
  private static boolean isSum(MethodCallExpr call) {
    // A sum whose fields are a variable hands its caller's on (a forwarding ledger, the store): checked at that caller.
    return call.getNameAsString().equals("sum") && call.getArguments().size() == 5 && call.getScope().isPresent()
        && !(call.getArgument(4) instanceof NameExpr);
  }

  private void addSum(Source source, MethodCallExpr call) {
    Set<String> collections = strings(source, call.getArgument(0), 0);
    List<Term> terms = new ArrayList<>();
    Optional<String> selecting = fieldOf(source, call.getArgument(2));
    if (selecting.isEmpty()) {
      unresolved.add(new Unresolved(where(source, call), call.toString()));
      return;
    }
    terms.add(new Term(selecting.get(), Use.EQUALITY));
    if (!(call.getArgument(4) instanceof MethodCallExpr list && list.getNameAsString().equals("of")
        && list.getScope().map(scope -> scope.toString().equals("List")).orElse(false))) {
      unresolved.add(new Unresolved(where(source, call), call.toString())); // the summed fields, not as List.of(…)
      return;
    }
    for (Expression field : list.getArguments()) {
      Optional<String> name = fieldOf(source, field);
      if (name.isEmpty()) {
        unresolved.add(new Unresolved(where(source, call), call.toString()));
        return;
      }
      terms.add(new Term(name.get(), Use.ASCENDING));
    }
    if (collections.isEmpty()) {
      unresolved.add(new Unresolved(where(source, call), call.toString()));
      return;
    }
    for (String collection : collections) {
      queries.add(new Query(collection, List.copyOf(terms), where(source, call), call.toString()));
    }
  }

  private static boolean isCollectionCall(MethodCallExpr call) {
    String name = call.getNameAsString();
    return (name.equals("collection") || name.equals("collectionGroup")) && call.getArguments().size() == 1
        && call.getScope().isPresent();
  }

  private static boolean isQueryCall(MethodCallExpr call) {
    return call.getScope().isPresent()
        && (QUERY_METHODS.contains(call.getNameAsString()) || call.getNameAsString().startsWith("where")
            && FILTERS.containsKey(call.getNameAsString()));
  }

  /** The outermost query call of a chain such as {@code db.collection(A).whereEqualTo(…).orderBy(…)}. */
  private static boolean isTopOfChain(MethodCallExpr call) {
    MethodCallExpr current = call;
    while (current.getParentNode().orElse(null) instanceof MethodCallExpr parent
        && parent.getScope().orElse(null) == current) {
      if (isQueryCall(parent)) {
        return false;
      }
      current = parent;
    }
    return true;
  }

  /** @param store in the library's store, whose generic sum names no collection (its callers' are resolved) */
  private void addQuery(Source source, MethodCallExpr top, boolean store) {
    List<Term> terms = new ArrayList<>();
    Set<String> collections = new LinkedHashSet<>();
    walkDown(source, top, terms, collections, 0);
    if (collections.isEmpty()) {
      if (!store) {
        unresolved.add(new Unresolved(where(source, top), top.toString()));
      }
      return;
    }
    List<Term> inOrder = new ArrayList<>(terms.reversed());
    for (String collection : collections) {
      queries.add(new Query(collection, List.copyOf(inOrder), where(source, top), top.toString()));
    }
  }

  /** Collects the terms of a chain from its outermost call down to the collection it starts from. */
  private void walkDown(Source source, Expression expression, List<Term> terms, Set<String> collections, int depth) {
    if (depth > DEPTH) {
      return;
    }
    if (expression instanceof MethodCallExpr call) {
      if (isCollectionCall(call)) {
        collections.addAll(collectionOf(source, call, depth));
        return;
      }
      if (isQueryCall(call)) {
        terms.addAll(termsOf(source, call).reversed());
      }
      call.getScope().ifPresent(scope -> walkDown(source, scope, terms, collections, depth + 1));
    } else if (expression instanceof NameExpr
        || expression instanceof FieldAccessExpr f && f.getScope() instanceof ThisExpr) {
      for (Expression value : valuesOf(source, expression, depth + 1)) {
        walkDown(source, value, terms, collections, depth + 1);
      }
    }
  }

  private List<Term> termsOf(Source source, MethodCallExpr call) {
    List<Term> terms = new ArrayList<>();
    String name = call.getNameAsString();
    if (name.equals("orderBy")) {
      boolean descending = call.getArguments().size() > 1 && call.getArgument(1).toString().endsWith("DESCENDING");
      fieldOf(source, call.getArgument(0))
          .ifPresent(f -> terms.add(new Term(f, descending ? Use.DESCENDING : Use.ASCENDING)));
    } else if (name.equals("where") && call.getArguments().size() == 1) {
      // where(Filter.equalTo(…)), where(Filter.and(…)): every condition inside counts
      for (MethodCallExpr filter : call.getArgument(0).findAll(MethodCallExpr.class)) {
        Use use = FILTERS.get(filter.getNameAsString());
        if (use != null && !filter.getArguments().isEmpty()) {
          fieldOf(source, filter.getArgument(0)).ifPresent(f -> terms.add(new Term(f, use)));
        }
      }
    } else if (FILTERS.containsKey(name) && !call.getArguments().isEmpty()) {
      fieldOf(source, call.getArgument(0)).ifPresent(f -> terms.add(new Term(f, FILTERS.get(name))));
    }
    return terms;
  }

  private Optional<String> fieldOf(Source source, Expression argument) {
    if (argument instanceof MethodCallExpr call && call.getNameAsString().equals("documentId")) {
      return Optional.of(DOCUMENT_ID);
    }
    if (argument instanceof MethodCallExpr call && call.getNameAsString().equals("of")
        && call.getScope().map(s -> s.toString().equals("FieldPath")).orElse(false)) {
      List<String> parts = new ArrayList<>();
      for (Expression part : call.getArguments()) {
        Set<String> text = strings(source, part, 0);
        if (text.size() != 1) {
          return Optional.empty();
        }
        parts.add(text.iterator().next());
      }
      return Optional.of(String.join(".", parts));
    }
    Set<String> text = strings(source, argument, 0);
    return text.size() == 1 ? Optional.of(text.iterator().next()) : Optional.empty();
  }

  private Set<String> collectionOf(Source source, MethodCallExpr collectionCall, int depth) {
    return strings(source, collectionCall.getArgument(0), depth);
  }

  /** Every text an expression can stand for; empty when the scan cannot tell. */
  Set<String> strings(Source source, Expression expression, int depth) {
    Set<String> out = new LinkedHashSet<>();
    if (depth > DEPTH) {
      return out;
    }
    if (expression instanceof StringLiteralExpr literal) {
      out.add(literal.asString());
    } else if (expression instanceof MethodCallExpr call && call.getNameAsString().equals("collection")
        && call.getArguments().isEmpty()) {
      out.add(ledgerCollection);
    } else if (expression instanceof FieldAccessExpr access && !(access.getScope() instanceof ThisExpr)) {
      String type = access.getScope().toString();
      java.constant(type.substring(type.lastIndexOf('.') + 1), access.getNameAsString()).ifPresent(out::add);
    } else if (expression instanceof NameExpr || expression instanceof FieldAccessExpr) {
      List<Expression> values = valuesOf(source, expression, depth + 1);
      for (Expression value : values) {
        out.addAll(strings(source, value, depth + 1));
      }
      if (values.isEmpty() && expression instanceof NameExpr name) {
        java.constant(source.className(), name.getNameAsString())
            .or(() -> inherited(source, name.getNameAsString())).or(() -> java.constant(name.getNameAsString()))
            .ifPresent(out::add);
      }
    }
    return out;
  }

  /** A constant the file's class names bare because an interface it implements declares it (an adapter's). */
  private Optional<String> inherited(Source source, String name) {
    return source.unit().findAll(ClassOrInterfaceDeclaration.class).stream()
        .filter(type -> type.getNameAsString().equals(source.className()))
        .flatMap(type -> type.getImplementedTypes().stream())
        .flatMap(type -> java.constant(type.getNameAsString(), name).stream()).findFirst();
  }

  /**
   * The expressions a name can hold: a local variable's initializer, a field's initializer and assignments, or,
   * for a parameter, the argument at its position in every call of its method (or constructor) in the same file.
   */
  private List<Expression> valuesOf(Source source, Expression nameExpression, int depth) {
    String name = nameExpression instanceof NameExpr n ? n.getNameAsString()
        : ((FieldAccessExpr) nameExpression).getNameAsString();
    List<Expression> values = new ArrayList<>();
    Optional<CallableDeclaration> callable = nameExpression.findAncestor(CallableDeclaration.class);
    if (nameExpression instanceof NameExpr && callable.isPresent()) {
      for (VariableDeclarator local : callable.get().findAll(VariableDeclarator.class)) {
        if (local.getNameAsString().equals(name) && !(local.getParentNode().orElse(null) instanceof FieldDeclaration)) {
          local.getInitializer().ifPresent(values::add);
        }
      }
      if (!values.isEmpty()) {
        return values;
      }
      NodeWithParameters params = new NodeWithParameters(callable.get());
      int index = params.indexOf(name);
      if (index >= 0) {
        for (NodeWithArguments<?> call : params.callsIn(source)) {
          if (call.getArguments().size() > index) {
            values.add(call.getArgument(index));
          }
        }
        return values;
      }
    }
    for (FieldDeclaration field : source.unit().findAll(FieldDeclaration.class)) {
      for (VariableDeclarator variable : field.getVariables()) {
        if (variable.getNameAsString().equals(name)) {
          variable.getInitializer().ifPresent(values::add);
        }
      }
    }
    for (AssignExpr assign : source.unit().findAll(AssignExpr.class)) {
      Expression target = assign.getTarget();
      String assigned = target instanceof NameExpr n ? n.getNameAsString()
          : target instanceof FieldAccessExpr f && f.getScope() instanceof ThisExpr ? f.getNameAsString() : null;
      if (name.equals(assigned)) {
        values.add(assign.getValue());
      }
    }
    return values;
  }

  /** The parameters of a method or constructor, and its calls in one file. */
  private record NodeWithParameters(CallableDeclaration<?> callable) {
    int indexOf(String name) {
      List<Parameter> parameters = callable.getParameters();
      for (int i = 0; i < parameters.size(); i++) {
        if (parameters.get(i).getNameAsString().equals(name)) {
          return i;
        }
      }
      return -1;
    }

    List<NodeWithArguments<?>> callsIn(Source source) {
      List<NodeWithArguments<?>> calls = new ArrayList<>();
      int arity = callable.getParameters().size();
      if (callable instanceof ConstructorDeclaration constructor) {
        for (ObjectCreationExpr creation : source.unit().findAll(ObjectCreationExpr.class)) {
          if (creation.getType().getNameAsString().equals(constructor.getNameAsString())
              && creation.getArguments().size() == arity) {
            calls.add(creation);
          }
        }
      } else if (callable instanceof MethodDeclaration method) {
        for (MethodCallExpr call : source.unit().findAll(MethodCallExpr.class)) {
          if (call.getNameAsString().equals(method.getNameAsString()) && call.getArguments().size() == arity
              && call.getScope().map(s -> s instanceof ThisExpr).orElse(true)) {
            calls.add(call);
          }
        }
      }
      return calls;
    }
  }

  /** Keys of {@code put(k, v)}, {@code Map.of(k, v, …)}, {@code Map.entry(k, v)} and {@code update(…, k, v, …)}. */
  private Set<String> writtenFields(Source source) {
    Set<String> fields = new LinkedHashSet<>();
    for (MethodCallExpr call : source.unit().findAll(MethodCallExpr.class)) {
      String name = call.getNameAsString();
      List<Expression> args = call.getArguments();
      int first = switch (name) {
        case "put", "entry" -> args.size() == 2 ? 0 : -1;
        case "of" ->
          call.getScope().map(s -> s.toString().equals("Map")).orElse(false) && args.size() % 2 == 0 ? 0 : -1;
        case "update" -> firstString(source, args);
        default -> -1;
      };
      if (first < 0) {
        continue;
      }
      for (int i = first; i < args.size(); i += 2) {
        fields.addAll(strings(source, args.get(i), 0));
      }
    }
    return fields;
  }

  private int firstString(Source source, List<Expression> args) {
    for (int i = 0; i < Math.min(2, args.size()); i++) {
      if (!strings(source, args.get(i), 0).isEmpty()) {
        return i;
      }
    }
    return -1;
  }

  private static String where(Source source, Node node) {
    return source.path() + ":" + node.getBegin().map(p -> p.line).orElse(0);
  }
}
