package dev.once.functions.analysis;

import dev.once.guard.Once;
import dev.once.guard.Outcome;
import dev.once.guard.Policy;
import dev.once.guard.Refusal;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.LedgerRecord;
import dev.once.ledger.RecordState;
import dev.once.ledger.ResultCodec;
import dev.once.pipeline.ContentKeys;
import dev.once.pipeline.DocumentSource;
import dev.once.pipeline.DocumentStatus;
import dev.once.pipeline.Effects;
import dev.once.pipeline.RecordQueries;
import dev.once.pipeline.RecordWrites;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Whether a document's bytes were uploaded before, under another name or as another generation, and where the first
 * document of those bytes stands: what decides if this one is analysed, completed as a copy, or waits. The content's
 * claim ({@link Effects#CONTENT}) names the first document; DocumentFlow acts on the verdict.
 */
final class SameContent {
  /**
   * A first copy whose try was released this long ago, and is not deferred, was abandoned: Eventarc retries a delivery
   * for a day. A copy then takes the content's claim over (a dead letter re-driven later finds that copy first).
   */
  static final Duration ABANDONED_AFTER = Duration.ofHours(24);
  /** How many times a copy follows the content's claim as other copies pass it on, before it is retried instead. */
  private static final int MAX_PASSES = 3;

  /** What a document is to the bytes it holds. */
  sealed interface Verdict permits First, CopyOfAnalysed, Waiting {}

  /** The document to analyse: the first of its bytes, or one whose upload asked for a re-analysis. */
  record First() implements Verdict {}

  /** A copy of {@code first}, which is analysed: completed as its duplicate, nothing paid. */
  record CopyOfAnalysed(IdempotencyKey first) implements Verdict {}

  /** A copy of {@code first}, which is not analysed yet: deferred until it is, for {@code reason}. */
  record Waiting(IdempotencyKey first, String reason) implements Verdict {}

  private static final First FIRST = new First();

  private final Once once;
  private final Supplier<RecordQueries> queries;

  SameContent(Once once, Supplier<RecordQueries> queries) {
    this.once = once;
    this.queries = queries;
  }

  /**
   * The same bytes uploaded before, under another name or as another generation (decision 23: a content claim follows
   * the analysis). The content's {@link ContentKeys key} is claimed here, recorded done naming this document when it
   * is the first ({@link Once#settle}): one write, and the document goes on. A later copy looks at the document the
   * claim names (its {@code analyse} record, read once, and in batch mode its analysis):
   * <ul>
   *   <li>analysed (a billed answer, with or without an invoice): this one is completed as its duplicate ({@link
   *       CopyOfAnalysed}) — recorded, published and so notified under its own key with {@code status: duplicate}
   *       and the first one's key, no Gemini call, no reservation, no bill;
   *   <li>being analysed right now (its claim held): in flight ({@link Refusal#inFlight}), released uncounted and
   *       redelivered;
   *   <li>not analysed yet (released after a failure and to be redelivered, deferred, or in batch mode queued,
   *       gathered or submitted): this one waits ({@link Waiting}), deferred ({@link RecordWrites#waiting}, nothing
   *       reserved or published), and the reconciler resumes it;
   *   <li>refused, given up, its job failed without an answer, or abandoned (released more than {@link
   *       #ABANDONED_AFTER} ago): the claim is passed on ({@link Once#pass}) and taken by this copy, which is analysed
   *       as the first; of copies racing for it one takes it and the others are its copies.
   * </ul>
   * {@link First} when this document is the one to analyse, or its upload asked for a re-analysis ({@link
   * DocumentSource#REANALYSE}), or {@code claimedWithAnalysis}: the commit that claimed its analysis created the
   * content's claim naming it ({@link #claimingContent}).
   */
  Verdict judge(IdempotencyKey key, DocumentSource document, byte[] content, boolean claimedWithAnalysis)
      throws Refusal {
    if (document.reanalyse() || claimedWithAnalysis) {
      return FIRST;
    }
    IdempotencyKey contentKey = contentKey(document, content);
    IdempotencyKey first = holderOf(claim(contentKey, key));
    for (int passes = 0; first != null && !first.equals(key); passes++) {
      Holder holder = holder(first);
      switch (holder.state()) {
        case ANALYSED -> {
          return new CopyOfAnalysed(first);
        }
        case IN_FLIGHT -> throw Refusal.inFlight(
            "the first document of the same content is being analysed; redelivered", holder.heldUntil());
        case WAITING -> {
          return new Waiting(first, "waiting for the first document of the same content (" + first.logHash()
              + ") to be analysed");
        }
        case PASSES -> {
          if (passes == MAX_PASSES) {
            throw Refusal.notPerformed("the claim on the same content kept moving while it was passed on; retried",
                null);
          }
          first = passOn(contentKey, first, holder.why(), key);
        }
      }
    }
    return FIRST;
  }

  /**
   * {@code policy}, claiming the content for this document in the commit that claims its analysis
   * ({@link Policy#settling}): the first delivery of new bytes then writes its two claims in one commit, and
   * {@link #judge} (told the commit created the content's claim) has nothing to write. A document that asks for a
   * re-analysis claims nothing of its bytes.
   */
  static Policy claimingContent(Policy policy, IdempotencyKey key, DocumentSource document, byte[] content) {
    return document.reanalyse() ? policy
        : policy.settling(contentKey(document, content), Effects.CONTENT, FirstCopy.CODEC, new FirstCopy(key));
  }

  private static IdempotencyKey contentKey(DocumentSource document, byte[] content) {
    return ContentKeys.of(document.bucket(), document.mimeType(), content);
  }

  /** Claims the content for this document: recorded done naming it in one write, or the outcome naming the first. */
  private Outcome claim(IdempotencyKey contentKey, IdempotencyKey key) {
    return once.settle(contentKey, Effects.CONTENT, FirstCopy.CODEC, new FirstCopy(key));
  }

  /** The document the content's claim names; null when it names none. */
  private static IdempotencyKey holderOf(Outcome claim) throws Refusal {
    return switch (claim) {
      case Outcome.Processed processed -> processed.recorded(FirstCopy.CODEC).orElseThrow().document();
      case Outcome.Duplicate duplicate -> duplicate.recorded(FirstCopy.CODEC).orElseThrow().document();
      case Outcome.InFlight held -> throw Refusal.inFlight(
          "the first document of the same content is being recorded; redelivered", held.leaseExpiresAt());
      default -> throw Refusal.notPerformed("the record of the same content answered " + claim.label()
          + "; retried", null);
    };
  }

  /**
   * What the content's claim records: the document whose analysis stands for the bytes (null: a record that names
   * none).
   */
  record FirstCopy(IdempotencyKey document) {
    static final ResultCodec<FirstCopy> CODEC = new ResultCodec<>() {
      public Map<String, Object> encode(FirstCopy first) {
        return Map.of("document", first.document().value());
      }

      public FirstCopy decode(Map<String, Object> fields) {
        return new FirstCopy(fields.get("document") instanceof String key ? IdempotencyKey.of(key) : null);
      }
    };
  }

  /**
   * The content's claim, named {@code first} when this copy judged it, passed on and claimed for this copy: read again
   * (uncached: another copy may have passed it on since, or this instance's answer be stale), passed on when it still
   * names {@code first} (fenced on its run: of copies racing, one moves it), and claimed. Returns the document the
   * claim now names: this one, or another copy that was faster (judged in turn).
   */
  private IdempotencyKey passOn(IdempotencyKey contentKey, IdempotencyKey first, String why, IdempotencyKey key)
      throws Refusal {
    Optional<LedgerRecord> record;
    try {
      record = once.record(contentKey, Effects.CONTENT);
    } catch (RuntimeException e) {
      throw Refusal.notPerformed("could not read the claim on the same content: " + e.getMessage(), e);
    }
    if (record.isPresent() && record.get().state() == RecordState.DONE) {
      IdempotencyKey named = record.get().outcome(FirstCopy.CODEC).orElseThrow().document();
      if (named != null && !first.equals(named)) {
        return named; // passed on since this instance last looked
      }
    }
    if (record.isPresent() && record.get().leaseLive()) {
      throw Refusal.inFlight("the claim on the same content is being taken by another copy; redelivered",
          record.get().leaseExpiresAt());
    }
    // Passed on here, or already (then false): either way this instance forgets its answer, and claims it anew.
    Outcome claimed;
    try {
      once.pass(contentKey, Effects.CONTENT, record.map(LedgerRecord::generation).orElse(1),
          "passed on from " + first.value() + ", " + why);
      claimed = claim(contentKey, key);
    } catch (Refusal e) {
      throw e;
    } catch (RuntimeException e) {
      // Nothing was paid for: this try does not count against the cap.
      throw Refusal.notPerformed("could not pass on the claim on the same content: " + e.getMessage(), e);
    }
    return holderOf(claimed);
  }

  /** Where the first document of some content stands, for its copies. */
  private enum HolderState {
    ANALYSED, IN_FLIGHT, WAITING, PASSES
  }

  /** @param why for a holder that passes its claim on: why (refused, given up, abandoned) */
  private record Holder(HolderState state, Instant heldUntil, String why) {
    static final Holder ANALYSED = new Holder(HolderState.ANALYSED, null, null);
    static final Holder WAITING = new Holder(HolderState.WAITING, null, null);

    static Holder passes(String why) {
      return new Holder(HolderState.PASSES, null, why);
    }
  }

  /**
   * Where {@code first} stands: its {@code analyse} record (a final one is cached: a copy of an analysed document costs
   * no read on a warm instance), and in batch mode, where that record only says the document was queued, its analysis.
   * Missing evidence never pays twice: a document whose records expired counts as analysed.
   */
  private Holder holder(IdempotencyKey first) throws Refusal {
    try {
      Optional<Outcome> finished = once.peek(first, Effects.ANALYSE);
      if (finished.isPresent()) {
        return switch (finished.get()) {
          case Outcome.Rejected rejected -> Holder.passes(rejected.gaveUp() ? "given up" : "refused");
          case Outcome.Duplicate done when done.recorded(AnalyseResult.CODEC)
              .orElseThrow() instanceof AnalyseResult.Queued ->
            holderInBatch(first);
          default -> Holder.ANALYSED;
        };
      }
      Optional<LedgerRecord> record = once.record(first, Effects.ANALYSE);
      if (record.isEmpty()) {
        return Holder.ANALYSED;
      }
      LedgerRecord analyse = record.get();
      switch (analyse.state()) {
        case DONE -> {
          return analyse.outcome(AnalyseResult.CODEC).orElseThrow() instanceof AnalyseResult.Queued
              ? holderInBatch(first) : Holder.ANALYSED;
        }
        case REJECTED -> {
          return Holder.passes(analyse.gaveUp() ? "given up" : "refused");
        }
        default -> {
          // claimed
        }
      }
      if (analyse.leaseLive()) {
        return new Holder(HolderState.IN_FLIGHT, analyse.leaseExpiresAt(), null);
      }
      boolean abandoned = analyse.generation() == 1 && analyse.leaseExpiresAt() != null
          && analyse.leaseExpiresAt().plus(ABANDONED_AFTER).isBefore(analyse.readTime())
          && !queries.get().analysis(first.documentId()).map(a -> a.status() == DocumentStatus.DEFERRED).orElse(false);
      return abandoned ? Holder.passes("abandoned: its last try was released over a day ago") : Holder.WAITING;
    } catch (RuntimeException e) {
      throw Refusal.notPerformed("could not read where the first document of the same content stands: "
          + e.getMessage(), e);
    }
  }

  /**
   * A document queued in batch mode: "analysed" is known only when its job completes, which its analysis says (a
   * missing one counts as analysed).
   */
  private Holder holderInBatch(IdempotencyKey first) {
    Optional<RecordQueries.AnalysisState> analysis = queries.get().analysis(first.documentId());
    // No analysis, or a status this version does not know: the first stands as analysed.
    DocumentStatus status = analysis.map(RecordQueries.AnalysisState::status).orElse(DocumentStatus.ANALYSED);
    return switch (status) {
      case QUEUED, GATHERED, SUBMITTED, DEFERRED -> Holder.WAITING;
      case REJECTED -> Holder.passes("refused");
      case FAILED -> analysis.get().billed() ? Holder.ANALYSED : Holder.passes("given up: no answer");
      case ANALYSED, DUPLICATE -> Holder.ANALYSED;
    };
  }
}
