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
 * reference ({@link BatchJobs#reference}), the model copies it into its answer, and an answer goes to a document only
 * when the reference it names is that document's — under the document's key, or under no key at all. An answer whose
 * key and reference disagree, one that names no reference (blocked, empty), and two answers naming one document are
 * given to nobody: those documents are run again. A request Gemini refused (its own error) fails only the document whose
 * key it came back under: an error carries no reference, and refusing the wrong document costs a rerun, not another's
 * invoice.
 *
 * <p>A job made before requests carried references (a job of one document, named after it) is matched by key, or its
 * only answer to its only document.
 */
public final class BatchAnswers {
  /** How an answer was matched to its document. */
  public enum Match {
    /** Its key came back and its reference agrees. */
    KEY_AND_REFERENCE,
    /** No key came back; its reference names the document. */
    REFERENCE,
    /** A job without references: by its key (or the only answer of a job of one document). */
    KEY
  }

  /** What a document of the job got. */
  public sealed interface Filed {}

  /** Its own answer. */
  public record Answered(BatchResult result, Match match) implements Filed {}

  /** Gemini refused its request inside the job: its own error, nothing generated. */
  public record Refused(String reason) implements Filed {}

  /** No answer that can be given to it safely: it is to be run again. */
  public record Unmatched(String reason) implements Filed {}

  private final Map<String, Filed> byDocument = new HashMap<>();
  private final List<BatchResult> unattributed = new ArrayList<>();

  /**
   * @param results the job's answers, in whatever order they came
   * @param members the ids ({@code IdempotencyKey#documentId}) of the documents the job was made for
   * @param referenceOf a member id's reference, or null for a job whose requests carried none
   * @param keyToId a key that came back, as a document id (null when it is no key of ours)
   */
  public static BatchAnswers of(List<BatchResult> results, Collection<String> members,
      Function<String, String> referenceOf, Function<String, String> keyToId) {
    return new BatchAnswers(results, List.copyOf(members), referenceOf, keyToId);
  }

  private BatchAnswers(List<BatchResult> results, List<String> members, Function<String, String> referenceOf,
      Function<String, String> keyToId) {
    Set<String> memberIds = new HashSet<>(members);
    Map<String, String> byReference = new HashMap<>();
    if (referenceOf != null) {
      members.forEach(id -> byReference.put(referenceOf.apply(id), id));
    }
    Map<String, List<Answered>> answered = new LinkedHashMap<>();
    Map<String, String> refused = new HashMap<>();
    Map<String, String> unusable = new HashMap<>();
    for (BatchResult result : results) {
      String keyed = result.documentKey().map(keyToId).filter(memberIds::contains).orElse(null);
      boolean keyCame = result.documentKey().isPresent();
      if (result.error().isPresent()) {
        // An error names no reference: it is the document's whose key it came under, if any.
        if (keyed != null) {
          refused.putIfAbsent(keyed, result.error().get());
        }
        unattributed.add(result);
        continue;
      }
      if (referenceOf == null) {
        String only = !keyCame && results.size() == 1 && members.size() == 1 ? members.get(0) : keyed;
        if (only != null) {
          answered.computeIfAbsent(only, id -> new ArrayList<>()).add(new Answered(result, Match.KEY));
        } else {
          unattributed.add(result);
        }
        continue;
      }
      String named = result.reference().map(byReference::get).orElse(null);
      if (named != null && (!keyCame || named.equals(keyed))) {
        answered.computeIfAbsent(named, id -> new ArrayList<>())
            .add(new Answered(result, keyCame ? Match.KEY_AND_REFERENCE : Match.REFERENCE));
        continue;
      }
      unattributed.add(result);
      if (keyed != null) {
        unusable.putIfAbsent(keyed, result.reference().isEmpty()
            ? "the answer filed under its key names no document reference"
            : "the answer filed under its key names another document's reference");
      }
    }
    for (String id : members) {
      List<Answered> own = answered.getOrDefault(id, List.of());
      if (own.size() == 1) {
        byDocument.put(id, own.get(0));
      } else if (own.size() > 1) {
        own.forEach(answer -> unattributed.add(answer.result()));
        byDocument.put(id, new Unmatched(own.size() + " answers of the job name it"));
      } else if (refused.containsKey(id)) {
        byDocument.put(id, new Refused(refused.get(id)));
      } else {
        byDocument.put(id, new Unmatched(unusable.getOrDefault(id, "no answer of the job names it")));
      }
    }
    answered.forEach((id, own) -> {
      if (!memberIds.contains(id)) {
        own.forEach(answer -> unattributed.add(answer.result()));
      }
    });
  }

  /** What the member with this id got. */
  public Filed forDocument(String documentId) {
    return Optional.ofNullable(byDocument.get(documentId))
        .orElse(new Unmatched("it is not one of the job's documents"));
  }

  /**
   * The answers given to no document (several naming one, an unknown key, no reference, a refusal under no key):
   * Google bills them all the same, so what they used is recorded against the job.
   */
  public List<BatchResult> unattributed() {
    return List.copyOf(unattributed);
  }
}
