package dev.once.gemini;

import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

/**
 * A finished job's answers filed to the documents they were generated for. Google documents that inlined responses
 * carry their request's {@code metadata} and come in request order; its users report both failing: responses without
 * the metadata (googleapis/python-genai#2008, googleapis/js-genai#1191; googleapis/go-genai#607 shows a REST answer
 * that does carry it), out of order on large jobs (googleapis/python-genai#1909, worked around in the SDK by an order
 * marker in the metadata, PR #2124), and a responses file line filed under another line's {@code key} (the same
 * thread). So position is never used, and a key that came back is not trusted alone: each request gives its document's
 * reference ({@link JobNames#reference}: unguessable, and new for each job), the model copies it into its answer, and
 * an answer goes to the document its reference names, wherever it was filed. An answer that names no reference of the
 * job, and two answers naming one document, are given to nobody: those documents are run again — and an answer Google
 * billed under a document's own key that cannot be verified is kept on that document, with its cost and why.
 *
 * <p>Gemini's own error for a request is read as sync mode reads the same failure ({@link BatchError}): a retryable
 * one (an internal error, an overload) runs its document again; only the document's own fault refuses it, and only
 * when nothing says the job's keys were misfiled (an error carries no reference: refusing the wrong document would cost
 * it its invoice).
 */
public final class BatchAnswers {
  /** How an answer was matched to its document. */
  public enum Match {
    /** Its key came back and its reference agrees. */
    KEY_AND_REFERENCE,
    /** No key came back; its reference names the document. */
    REFERENCE,
    /** Its reference names the document, but it came back under another key (or one of no document). */
    REFERENCE_MISFILED,
    /** A job whose requests carried no reference: by its key (or the only answer of a job of one document). */
    KEY
  }

  /** How the job's requests were made, which says how its answers can be matched. */
  public enum Rules {
    /** Each request gave its document's reference (a gathering marked so before its job was made): by reference. */
    REFERENCED,
    /**
     * A gathering made by a version that did not mark it (in flight at an upgrade): its requests may or may not have
     * given references. An answer naming a reference goes by it; one naming none, by its key — never paid twice for
     * want of a reference its request never asked for.
     */
    LEGACY,
    /** A job of one document, made before gathering existed: by its key, or its only answer. */
    KEY
  }

  /** What a document of the job got. */
  public sealed interface Filed {}

  /** Its own answer. */
  public record Answered(BatchResult result, Match match) implements Filed {}

  /** Gemini refused its request inside the job for what the document holds (Google's words): nothing generated. */
  public record Refused(String reason) implements Filed {}

  /**
   * No answer that can be given to it safely: it is to be run again. {@code billed}: an answer filed under its own key
   * that cannot be verified as its (it names no reference, or another), which Google billed: kept on the document.
   */
  public record Unmatched(String reason, Optional<BatchResult> billed) implements Filed {
    public Unmatched(String reason) {
      this(reason, Optional.empty());
    }
  }

  private final Map<String, Filed> byDocument = new HashMap<>();
  private final List<BatchResult> unattributed = new ArrayList<>();

  /**
   * @param results the job's answers, in whatever order they came
   * @param members the ids ({@code IdempotencyKey#documentId}) of the documents the job was made for
   * @param referenceOf a member id's reference (unused for {@link Rules#KEY})
   * @param keyToId a key that came back, as a document id (null when it is no key of ours)
   */
  public static BatchAnswers of(List<BatchResult> results, Collection<String> members, Rules rules,
      Function<String, String> referenceOf, Function<String, String> keyToId) {
    return new BatchAnswers(results, List.copyOf(members), rules, referenceOf, keyToId);
  }

  private BatchAnswers(List<BatchResult> results, List<String> members, Rules rules,
      Function<String, String> referenceOf, Function<String, String> keyToId) {
    Set<String> memberIds = new HashSet<>(members);
    Map<String, String> byReference = new HashMap<>();
    if (rules != Rules.KEY) {
      members.forEach(id -> byReference.put(referenceOf.apply(id), id));
    }
    Map<String, List<Answered>> answered = new LinkedHashMap<>();
    Map<String, List<BatchError>> errors = new HashMap<>();
    Map<String, List<BatchResult>> unverified = new HashMap<>();
    boolean misfiled = false;
    for (BatchResult result : results) {
      String keyed = result.documentKey().map(keyToId).filter(memberIds::contains).orElse(null);
      boolean keyCame = result.documentKey().isPresent();
      if (result.error().isPresent()) {
        if (keyed != null) {
          errors.computeIfAbsent(keyed, id -> new ArrayList<>()).add(result.error().get());
        } else {
          unattributed.add(result); // nobody's, and nothing generated: counted, costing nothing
        }
        continue;
      }
      if (rules == Rules.KEY) {
        String only = !keyCame && results.size() == 1 && members.size() == 1 ? members.get(0) : keyed;
        if (only != null) {
          answered.computeIfAbsent(only, id -> new ArrayList<>()).add(new Answered(result, Match.KEY));
        } else {
          unattributed.add(result);
        }
        continue;
      }
      String named = result.reference().map(byReference::get).orElse(null);
      if (named != null) {
        Match match = !keyCame ? Match.REFERENCE : named.equals(keyed) ? Match.KEY_AND_REFERENCE
            : Match.REFERENCE_MISFILED;
        misfiled |= match == Match.REFERENCE_MISFILED;
        answered.computeIfAbsent(named, id -> new ArrayList<>()).add(new Answered(result, match));
      } else if (rules == Rules.LEGACY && result.reference().isEmpty() && keyed != null) {
        answered.computeIfAbsent(keyed, id -> new ArrayList<>()).add(new Answered(result, Match.KEY));
      } else if (keyed != null) {
        unverified.computeIfAbsent(keyed, id -> new ArrayList<>()).add(result);
      } else {
        unattributed.add(result);
      }
    }
    for (String id : members) {
      byDocument.put(id, file(id, answered.getOrDefault(id, List.of()), errors.getOrDefault(id, List.of()),
          unverified.getOrDefault(id, List.of()), misfiled));
    }
    answered.forEach((id, own) -> {
      if (!memberIds.contains(id)) {
        own.forEach(answer -> unattributed.add(answer.result()));
      }
    });
  }

  private Filed file(String id, List<Answered> own, List<BatchError> errors, List<BatchResult> unverified,
      boolean misfiled) {
    if (own.size() == 1) {
      unattributed.addAll(unverified); // billed, but the document has its own: nobody's
      return own.get(0);
    }
    if (own.size() > 1) {
      own.forEach(answer -> unattributed.add(answer.result()));
      unattributed.addAll(unverified);
      return new Unmatched(own.size() + " answers of the job name it");
    }
    if (!unverified.isEmpty()) {
      String reason = unverified.get(0).reference().isEmpty()
          ? "the answer filed under its key names no document reference"
          : "the answer filed under its key names another document's reference";
      if (!misfiled && unverified.size() == 1) {
        return new Unmatched(reason, Optional.of(unverified.get(0)));
      }
      unattributed.addAll(unverified); // the job's keys were misfiled: under its key is no proof it is its
      return new Unmatched(reason);
    }
    if (!errors.isEmpty()) {
      BatchError error = errors.get(0);
      if (errors.size() == 1 && !misfiled && error.documentsFault()) {
        return new Refused(error.describe());
      }
      return new Unmatched(misfiled ? "an error came back under its key in a job whose keys were misfiled: "
          + error.describe() : error.describe() + " (retried, as sync mode retries it)");
    }
    return new Unmatched("no answer of the job names it");
  }

  /** What the member with this id got. */
  public Filed forDocument(String documentId) {
    return Optional.ofNullable(byDocument.get(documentId))
        .orElse(new Unmatched("it is not one of the job's documents"));
  }

  /**
   * The answers given to no document (several naming one, an unknown key, no reference under no key, an error under
   * no key): Google bills the answers all the same, so what they used is recorded against the job.
   */
  public List<BatchResult> unattributed() {
    return List.copyOf(unattributed);
  }
}
