package dev.once.guard;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.once.config.InvalidSetting;
import dev.once.config.Settings;
import dev.once.guard.Outcome.Conflict;
import dev.once.guard.Outcome.Deferred;
import dev.once.guard.Outcome.Duplicate;
import dev.once.guard.Outcome.InFlight;
import dev.once.guard.Outcome.Processed;
import dev.once.guard.Outcome.Rejected;
import dev.once.internal.guard.EffectFailed;
import dev.once.key.IdempotencyKey;
import dev.once.ledger.Call;
import dev.once.ledger.Claim;
import dev.once.ledger.ClaimOptions;
import dev.once.ledger.ClaimResult;
import dev.once.ledger.DocumentWrites;
import dev.once.ledger.ForwardingLedger;
import dev.once.ledger.LeaseLost;
import dev.once.ledger.Ledger;
import dev.once.ledger.LedgerOptions;
import dev.once.ledger.LedgerRecord;
import dev.once.ledger.LedgerUnavailable;
import dev.once.ledger.NextClaim;
import dev.once.ledger.RecordState;
import dev.once.ledger.ResultCodec;
import dev.once.ledger.SideWrites;
import dev.once.local.Await;
import dev.once.local.Bounds;
import dev.once.observe.Log;
import dev.once.observe.OutcomeLabel;
import dev.once.testing.InMemoryLedger;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.math.BigInteger;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** The guard's rules, on the in-memory ledger (the contract tests prove it behaves as Firestore's). */
class OnceTest {
  private static final IdempotencyKey KEY = IdempotencyKey.of("pubsub:1234");
  private volatile Instant now = Instant.parse("2026-11-30T10:00:00Z");
  private final InMemoryLedger ledger = new InMemoryLedger(LedgerOptions.defaults(), () -> now);
  private final ByteArrayOutputStream logged = new ByteArrayOutputStream();
  private final Once once = new Once(ledger).loggingTo(Log.to(new PrintStream(logged, true, StandardCharsets.UTF_8)));
  private final AtomicInteger runs = new AtomicInteger();

  private Completion count(Attempt attempt) {
    runs.incrementAndGet();
    return Completion.of(Map.of("attempt", (long) attempt.number()));
  }

  /** A typed result, as a user's effect keeps one: the codec spells its fields. */
  private record Receipt(String id, long cents) {
    static final ResultCodec<Receipt> CODEC = new ResultCodec<>() {
      public Map<String, Object> encode(Receipt receipt) {
        return Map.of("id", receipt.id(), "cents", receipt.cents());
      }

      public Receipt decode(Map<String, Object> fields) {
        return new Receipt((String) fields.get("id"), ((Number) fields.get("cents")).longValue());
      }
    };
  }

  @Test
  void aPolicySettlingAnotherRecord_createsItWithTheClaim_andTellsTheEffectWhetherItDid() {
    IdempotencyKey shared = IdempotencyKey.of("content:shared");
    IdempotencyKey other = IdempotencyKey.of("pubsub:5678");
    List<Boolean> told = new ArrayList<>();
    Once.Effect effect = attempt -> {
      told.add(attempt.settledAlongside());
      return Completion.of(Map.of());
    };

    once.run(KEY, "pay", Policy.DEFAULT.settling(shared, "content", Receipt.CODEC, new Receipt(KEY.value(), 1)),
        effect);
    once.run(other, "pay", Policy.DEFAULT.settling(shared, "content", Receipt.CODEC, new Receipt(other.value(), 2)),
        effect);

    assertEquals(List.of(true, false), told, "the second found the record the first created");
    assertEquals(new Receipt(KEY.value(), 1),
        ledger.lookup(shared, "content").orElseThrow().outcome(Receipt.CODEC).orElseThrow());
    assertEquals(new Receipt(KEY.value(), 1), once.settle(shared, "content", Receipt.CODEC,
        new Receipt(other.value(), 2)).recorded(Receipt.CODEC).orElseThrow(), "a settle finds it settled");
  }

  @Test
  void typedResult_isRecordedAsItsCodecEncodesIt_andDecodedForEveryDuplicate() {
    Receipt paid = new Receipt("r-1", 1250);
    Outcome first = once.run(KEY, "pay", attempt -> Completion.of(Receipt.CODEC, paid));
    assertEquals(Map.of("id", "r-1", "cents", 1250L), assertInstanceOf(Processed.class, first).result());
    assertEquals(Optional.of(paid), first.recorded(Receipt.CODEC));
    // Another instance (no cache) reads it back from the record: a duplicate, decoded to the same value.
    Outcome again = new Once(ledger).run(KEY, "pay", attempt -> Completion.of(Receipt.CODEC, new Receipt("r-2", 1)));
    assertEquals(Optional.of(paid), assertInstanceOf(Duplicate.class, again).recorded(Receipt.CODEC));
    Outcome refused = once.run(KEY, "refund", attempt -> {
      throw Refusal.permanent("not refundable");
    });
    assertEquals(Optional.empty(), assertInstanceOf(Rejected.class, refused).recorded(Receipt.CODEC));
  }

  @Test
  void firstDelivery_isProcessed_andTheSecondIsADuplicateWithTheSameResult() {
    Processed first = assertInstanceOf(Processed.class, once.run(KEY, "notify", this::count));
    assertEquals(Map.of("attempt", 1L), first.result());
    Duplicate second = assertInstanceOf(Duplicate.class, once.run(KEY, "notify", this::count));
    assertEquals(Map.of("attempt", 1L), second.result());
    assertEquals(1, runs.get());
  }

  @Test
  void failingEffect_releasesItsClaim_andIsRetriedByTheNextDelivery() {
    IllegalStateException boom = new IllegalStateException("notify endpoint answered 503");
    IllegalStateException thrown = assertThrows(IllegalStateException.class, () -> once.run(KEY, "notify", attempt -> {
      runs.incrementAndGet();
      throw boom;
    }));
    assertSame(boom, thrown, "the effect's own exception is rethrown");
    LedgerRecord released = ledger.lookup(KEY, "notify").orElseThrow();
    assertFalse(released.leaseLive());
    assertTrue(released.error().contains("notify endpoint answered 503"), released.error());

    Processed retried = assertInstanceOf(Processed.class, once.run(KEY, "notify", this::count));
    assertEquals(2, retried.attempts());
    assertEquals(2, runs.get());
  }

  @Test
  void recordedError_namesTheRootCause() {
    assertEquals("IllegalStateException: Failed to execute HTTP request. (cause: IOException: timeout)",
        Once.describe(new IllegalStateException("Failed to execute HTTP request.", new IOException("timeout"))));
    assertEquals("IllegalStateException: boom", Once.describe(new IllegalStateException("boom")));
  }

  @Test
  void checkedFailure_isRethrownUnchecked_afterRelease() {
    EffectFailed thrown = assertThrows(EffectFailed.class, () -> once.run(KEY, "notify", attempt -> {
      throw new IOException("connection reset");
    }));
    assertInstanceOf(IOException.class, thrown.getCause());
    assertFalse(ledger.lookup(KEY, "notify").orElseThrow().leaseLive());
  }

  @Test
  void permanentFailure_isRejectedOnceWithItsWrites_andNeverRetried() {
    Rejected now = assertInstanceOf(Rejected.class, once.run(KEY, "analyse", attempt -> {
      runs.incrementAndGet();
      throw Refusal.permanent("empty document",
          writes -> writes.create("analyses", "x", Map.of("status", "rejected")));
    }));
    assertTrue(now.now());
    assertEquals("empty document", now.reason());
    assertEquals("rejected", ledger.document("analyses", "x").orElseThrow().get("status"));

    Rejected later = assertInstanceOf(Rejected.class, once.run(KEY, "analyse", attempt -> {
      runs.incrementAndGet();
      return Completion.of(Map.of(), SideWrites.NONE);
    }));
    assertFalse(later.now());
    assertEquals("empty document", later.reason());
    assertEquals(1, runs.get());
  }

  @Test
  void resultTheStoreCannotHold_isRejectedOnce_insteadOfRetriedForever() {
    Rejected rejected = assertInstanceOf(Rejected.class, once.run(KEY, "notify", attempt -> {
      runs.incrementAndGet();
      return Completion.of(Map.of("total", new BigInteger("10").pow(30)));
    }));
    assertTrue(rejected.reason().contains("could not be recorded"), rejected.reason());
    assertInstanceOf(Rejected.class, once.run(KEY, "notify", this::count));
    assertEquals(1, runs.get(), "not run again");
  }

  @Test
  void committedEffect_landsWithItsCompletion() {
    once.run(KEY, "analyse", attempt -> Completion.of(Map.of("id", "a1"),
        writes -> writes.create("analyses", "a1", Map.of("key", KEY.value()))));
    assertTrue(ledger.document("analyses", "a1").isPresent());
    assertEquals(RecordState.DONE, ledger.lookup(KEY, "analyse").orElseThrow().state());
  }

  @Test
  void changedPayload_isAConflict_loggedLoudly_andNotRun() {
    once.run(KEY, "notify", "sha256:aaa", this::count);
    Conflict conflict = assertInstanceOf(Conflict.class, once.run(KEY, "notify", "sha256:bbb", this::count));
    assertEquals("sha256:aaa", conflict.storedFingerprint());
    assertEquals(1, runs.get());
    String line = logged.toString(StandardCharsets.UTF_8);
    assertTrue(line.contains("\"severity\":\"ERROR\"") && line.contains("sha256:bbb"), line);
  }

  @Test
  void deliveryWhileAnotherRuns_isInFlight() throws Exception {
    CountDownLatch inside = new CountDownLatch(1);
    CountDownLatch finish = new CountDownLatch(1);
    CompletableFuture<Outcome> first = CompletableFuture.supplyAsync(() -> once.run(KEY, "notify", attempt -> {
      inside.countDown();
      assertTrue(finish.await(30, TimeUnit.SECONDS));
      return count(attempt);
    }));
    assertTrue(inside.await(30, TimeUnit.SECONDS));
    assertInstanceOf(InFlight.class, once.run(KEY, "notify", this::count));
    finish.countDown();
    assertInstanceOf(Processed.class, first.get(30, TimeUnit.SECONDS));
    assertEquals(1, runs.get());
  }

  @Test
  void peek_tellsDoneRejectedConflictOrNothing() {
    assertEquals(Optional.empty(), once.peek(KEY, "notify"));
    once.run(KEY, "notify", "fp", this::count);
    assertInstanceOf(Duplicate.class, once.peek(KEY, "notify", "fp").orElseThrow());
    assertInstanceOf(Conflict.class, once.peek(KEY, "notify", "other").orElseThrow());
    once.run(IdempotencyKey.of("pubsub:9"), "notify", attempt -> {
      throw Refusal.permanent("410 Gone");
    });
    assertInstanceOf(Rejected.class, once.peek(IdempotencyKey.of("pubsub:9"), "notify").orElseThrow());
  }

  @Test
  void peek_ofAClaimInFlightOrExpired_isEmpty_soTheCallerGoesOnToClaim() {
    ledger.claim(KEY, "notify");
    assertEquals(Optional.empty(), once.peek(KEY, "notify"), "in flight");
    now = now.plus(LedgerOptions.defaults().lease()).plusSeconds(1);
    assertEquals(Optional.empty(), once.peek(KEY, "notify"), "expired");
  }

  @Test
  void completionThatCannotBeRecorded_releasesTheClaim_soTheRedeliveryRetriesAtOnce() {
    Ledger failingComplete = new ForwardingLedger(ledger) {
      @Override
      public Optional<Claim> complete(Claim claim, Map<String, Object> outcome, SideWrites writes, NextClaim next) {
        throw new IllegalStateException("Firestore unavailable");
      }
    };
    assertThrows(IllegalStateException.class, () -> new Once(failingComplete).run(KEY, "notify", this::count));
    assertInstanceOf(Processed.class, once.run(KEY, "notify", this::count));
    assertEquals(2, runs.get(), "an external effect is at-least-once when its completion is lost");
  }

  @Test
  void effectThatOutlivesItsLease_cannotComplete_andItsWritesDoNotLand() throws Exception {
    CountDownLatch holding = new CountDownLatch(1);
    CountDownLatch overtaken = new CountDownLatch(1);
    CompletableFuture<Outcome> stale = CompletableFuture.supplyAsync(() -> once.run(KEY, "analyse",
        attempt -> {
          holding.countDown();
          assertTrue(overtaken.await(30, TimeUnit.SECONDS));
          return Completion.of(Map.of("by", "stale"), writes -> writes.create("analyses", "stale", Map.of()));
        }));
    assertTrue(holding.await(30, TimeUnit.SECONDS), "the first delivery holds the claim");
    now = now.plus(LedgerOptions.defaults().lease()).plusSeconds(1);
    assertInstanceOf(Processed.class, once.run(KEY, "analyse", attempt -> Completion.of(Map.of("by", "current"),
        writes -> writes.create("analyses", "current", Map.of()))), "the second delivery takes the expired lease over");
    overtaken.countDown();
    Throwable failure = assertThrows(Exception.class, () -> stale.get(30, TimeUnit.SECONDS)).getCause();
    assertInstanceOf(LeaseLost.class, failure);
    assertTrue(ledger.document("analyses", "stale").isEmpty());
    assertTrue(ledger.document("analyses", "current").isPresent());
    assertEquals(Map.of("by", "current"), ledger.lookup(KEY, "analyse").orElseThrow().outcome());
  }

  @Test
  void aPaidEffect_isGivenUp_afterItsCapOfTriesThatMayHaveRun_withTheCallersWrites() {
    Policy paid = Policy.DEFAULT.capped(3, reason -> writes -> writes.merge("analyses", "a1",
        Map.of("status", "failed", "reason", reason)));
    for (int i = 0; i < 3; i++) {
      assertThrows(EffectFailed.class, () -> once.run(KEY, "analyse", paid, attempt -> {
        runs.incrementAndGet();
        throw new SocketTimeoutException("timed out");
      }));
    }
    Rejected gaveUp = assertInstanceOf(Rejected.class, once.run(KEY, "analyse", paid, this::count));

    assertEquals(3, runs.get(), "never a fourth try that may cost money");
    assertTrue(gaveUp.gaveUp() && gaveUp.now(), gaveUp.reason());
    assertEquals("gave up after 3 tries that may have run: SocketTimeoutException: timed out", gaveUp.reason());
    assertEquals(gaveUp.reason(), ledger.document("analyses", "a1").orElseThrow().get("reason"));
    assertEquals(OutcomeLabel.FAILED, gaveUp.label(), "given up: failed, as the caller's record says");
    Rejected later = assertInstanceOf(Rejected.class, once.run(KEY, "analyse", paid, this::count));
    assertEquals(OutcomeLabel.FAILED, later.label(), "a later delivery meets the same failure");
    assertEquals(OutcomeLabel.REJECTED, new Rejected("the document is empty", true, false).label(),
        "bad input is rejected");
    assertEquals(3, runs.get());
  }

  @Test
  void triesThatCertainlyDidNotRun_doNotUseUpTheCap() {
    Policy paid = Policy.DEFAULT.capped(2, reason -> SideWrites.NONE);
    for (int i = 0; i < 5; i++) {
      assertEquals(Refusal.Kind.NOT_PERFORMED, assertThrows(Refusal.class,
          () -> once.run(KEY, "analyse", paid, attempt -> {
            throw Refusal.notPerformed("Gemini answered 429: nothing billed", null);
          })).kind());
    }
    Processed processed = assertInstanceOf(Processed.class, once.run(KEY, "analyse", paid, this::count));
    assertEquals(6, processed.attempts());
    LedgerRecord record = ledger.lookup(KEY, "analyse").orElseThrow();
    assertEquals(1, record.spent());
    assertEquals(Call.Outcome.NOT_PERFORMED, record.calls().get(0).outcome());
  }

  /**
   * The record keeps its latest tries only; what a retry learns of the earlier ones that may have run must not depend
   * on that: after a failed try and more tries that certainly did nothing than the history keeps, it still sees one.
   */
  @Test
  void anAttempt_countsTheEarlierTriesThatMayHaveRun_pastWhatTheHistoryKeeps() {
    List<Integer> seen = new ArrayList<>();
    assertThrows(IllegalStateException.class, () -> once.run(KEY, "analyse", attempt -> {
      seen.add(attempt.earlierTriesThatMayHaveRun());
      throw new IllegalStateException("timed out: it may have run");
    }));
    for (int i = 0; i < 12; i++) {
      assertEquals(Refusal.Kind.NOT_PERFORMED, assertThrows(Refusal.class, () -> once.run(KEY, "analyse", attempt -> {
        seen.add(attempt.earlierTriesThatMayHaveRun());
        throw Refusal.notPerformed("refused before any work", null);
      })).kind());
    }
    once.run(KEY, "analyse", attempt -> {
      seen.add(attempt.earlierTriesThatMayHaveRun());
      return Completion.of(Map.of());
    });

    assertEquals(0, seen.get(0), "the first try has none before it");
    assertEquals(Collections.nCopies(13, 1), seen.subList(1, 14), "each later one sees the first");
    assertTrue(ledger.lookup(KEY, "analyse").orElseThrow().calls().stream().noneMatch(c -> c.number() == 1),
        "though the history no longer holds it");
  }

  @Test
  void aNotPerformedTry_commitsItsWritesWithTheRelease() {
    assertEquals(Refusal.Kind.NOT_PERFORMED, assertThrows(Refusal.class, () -> once.run(KEY, "analyse", attempt -> {
      throw Refusal.notPerformed("refused before any work", null,
          writes -> writes.merge("budget", "day", Map.of("reserved", DocumentWrites.increment(-7))));
    })).kind());
    assertEquals(-7L, ledger.document("budget", "day").orElseThrow().get("reserved"), "landed with the release");
    LedgerRecord record = ledger.lookup(KEY, "analyse").orElseThrow();
    assertEquals(0, record.spent());
    assertFalse(record.leaseLive());
  }

  @Test
  void aDeferredEffect_isReleasedAsNotPerformed_withItsWrites_andAcknowledged_thenRunsOnceWhenClaimedAgain() {
    Policy paid = Policy.DEFAULT.capped(1, reason -> SideWrites.NONE);
    for (int i = 0; i < 3; i++) {
      Outcome outcome = once.run(KEY, "analyse", paid, attempt -> {
        throw Refusal.deferred("over the day's budget", writes -> writes.merge("analyses", "a1",
            Map.of("status", "deferred", "reason", "over the day's budget")));
      });
      Deferred deferred = assertInstanceOf(Deferred.class, outcome, "answered, not thrown: the event is acknowledged");
      assertEquals("over the day's budget", deferred.reason());
      assertEquals(i + 1, deferred.attempts());
      assertEquals(OutcomeLabel.DEFERRED, deferred.label());
    }
    assertEquals("deferred", ledger.document("analyses", "a1").orElseThrow().get("status"), "written with the release");
    LedgerRecord record = ledger.lookup(KEY, "analyse").orElseThrow();
    assertEquals(RecordState.CLAIMED, record.state());
    assertFalse(record.leaseLive(), "free at once for whatever resumes it");
    assertEquals(0, record.spent(), "deferred tries do not use up the cap of one");
    assertEquals(Call.Outcome.NOT_PERFORMED, record.calls().get(record.calls().size() - 1).outcome());
    assertTrue(record.error().startsWith(Once.DEFERRED), record.error());
    assertEquals(Optional.empty(), once.peek(KEY, "analyse"), "not settled: nothing to answer from");

    Processed resumed = assertInstanceOf(Processed.class, once.run(KEY, "analyse", paid, this::count));
    assertEquals(4, resumed.attempts());
    assertInstanceOf(Duplicate.class, once.run(KEY, "analyse", paid, this::count));
    assertEquals(1, runs.get(), "run once, whenever that happened");
  }

  @Test
  void anEffectWaitingForAnotherHolder_isReleasedUncounted_andAnsweredInFlight_beyondTheCap() {
    Policy paid = Policy.DEFAULT.capped(1, reason -> SideWrites.NONE);
    Instant heldUntil = Instant.parse("2026-12-02T10:00:00Z");
    for (int i = 0; i < 3; i++) {
      Outcome outcome = once.run(KEY, "analyse", paid, attempt -> {
        throw Refusal.inFlight("what it needs is held by another delivery", heldUntil);
      });
      InFlight inFlight = assertInstanceOf(InFlight.class, outcome, "answered as a claim held elsewhere is");
      assertEquals(heldUntil, inFlight.leaseExpiresAt());
      assertEquals(OutcomeLabel.IN_FLIGHT, inFlight.label());
    }
    LedgerRecord record = ledger.lookup(KEY, "analyse").orElseThrow();
    assertEquals(RecordState.CLAIMED, record.state());
    assertFalse(record.leaseLive(), "free at once for the next delivery");
    assertEquals(0, record.spent(), "waiting tries do not use up the cap of one");
    assertEquals(Call.Outcome.NOT_PERFORMED, record.calls().get(record.calls().size() - 1).outcome());
    assertInstanceOf(Processed.class, once.run(KEY, "analyse", paid, this::count));
    assertEquals(1, runs.get());
  }

  @Test
  void aDeferralWhoseReleaseFails_isThrown_soTheEventComesAgain() {
    Once failing = new Once(new ForwardingLedger(ledger) {
      @Override
      public void release(Claim claim, String error, boolean mayHaveRun, SideWrites writes) {
        throw new LedgerUnavailable("Firestore did not answer", null);
      }
    });
    assertThrows(LedgerUnavailable.class, () -> failing.run(KEY, "analyse", attempt -> {
      throw Refusal.deferred("over the day's budget", SideWrites.NONE);
    }));
    assertTrue(ledger.lookup(KEY, "analyse").orElseThrow().leaseLive(), "the lease runs out instead");
  }

  @Test
  void aLiveHoldersLease_isRenewedWhileItWorks_soNoOtherDeliveryTakesItOver() throws Exception {
    // The store's clock is the test's: it moves only after a renewal was seen, and by less than a lease, so no
    // delivery can find the claim expired unless a renewal failed to come. A real clock made this depend on the
    // machine: a renewal due every third of the lease came 300 ms late at a load of 15, and that is a takeover.
    AtomicReference<Instant> clock =
        new AtomicReference<>(Instant.parse("2026-11-30T10:00:00Z"));
    Duration lease = Duration.ofSeconds(1);
    InMemoryLedger shortLeases = new InMemoryLedger(LedgerOptions.defaults().withLease(lease), clock::get);
    Once holder = new Once(shortLeases);
    CountDownLatch working = new CountDownLatch(1);
    CountDownLatch done = new CountDownLatch(1);
    CompletableFuture<Outcome> first = CompletableFuture.supplyAsync(() -> holder.run(KEY, "notify", attempt -> {
      working.countDown();
      assertTrue(done.await(5, TimeUnit.MINUTES));
      return count(attempt);
    }));
    assertTrue(working.await(2, TimeUnit.MINUTES));
    Instant claimedUntil = shortLeases.lookup(KEY, "notify").orElseThrow().leaseExpiresAt();
    // Three leases pass on the store's clock while the holder works, half a lease at a time, each step only once the
    // holder renewed at the time before it; every delivery meanwhile finds the claim held.
    while (!clock.get().isAfter(claimedUntil.plus(lease.multipliedBy(3)))) {
      Instant expires = shortLeases.lookup(KEY, "notify").orElseThrow().leaseExpiresAt();
      Instant renewedAt = clock.get();
      Await.until(Duration.ofMinutes(2), () -> shortLeases.lookup(KEY, "notify").orElseThrow()
          .leaseExpiresAt().isAfter(expires) || !expires.isBefore(renewedAt.plus(lease)),
          "the holder to renew its lease at " + renewedAt);
      clock.set(clock.get().plus(lease.dividedBy(2)));
      assertInstanceOf(InFlight.class, new Once(shortLeases).run(KEY, "notify", this::count),
          "held at " + clock.get() + ", the lease renewed to " + shortLeases.lookup(KEY, "notify").orElseThrow()
              .leaseExpiresAt());
    }
    done.countDown();
    assertInstanceOf(Processed.class, first.get(2, TimeUnit.MINUTES));
    assertEquals(1, runs.get());
  }

  /** An Error (out of memory, a class that failed to load) stops the renewals: the claim runs out within one lease. */
  @Test
  void anErrorFromTheEffect_stopsTheRenewals_soTheClaimIsTakenOverWithinALease() {
    Instant[] clock = {Instant.parse("2026-11-30T10:00:00Z")};
    InMemoryLedger shortLeases = new InMemoryLedger(LedgerOptions.defaults().withLease(Duration.ofMillis(300)),
        () -> clock[0].plusMillis(System.nanoTime() / 1_000_000));
    assertThrows(StackOverflowError.class, () -> new Once(shortLeases).run(KEY, "notify", attempt -> {
      throw new StackOverflowError("deep");
    }));
    Instant claimedUntil = shortLeases.lookup(KEY, "notify").orElseThrow().leaseExpiresAt();
    Await.until(Bounds.CALL, () -> shortLeases.now().isAfter(claimedUntil.plusMillis(900)),
        "three leases to pass");
    assertInstanceOf(Processed.class, new Once(shortLeases).run(KEY, "notify", this::count),
        "taken over: nobody renewed the lease");
    assertEquals(1, runs.get());
  }

  @Test
  void ensureLease_extendsALeaseThatWouldNotOutlastTheWork_beforeTheWorkStarts() {
    once.run(KEY, "publish", attempt -> {
      Instant before = ledger.lookup(KEY, "publish").orElseThrow().leaseExpiresAt();
      attempt.ensureLease(Duration.ofMinutes(30));
      Instant after = ledger.lookup(KEY, "publish").orElseThrow().leaseExpiresAt();
      assertTrue(after.isAfter(now.plus(Duration.ofMinutes(30))), before + " -> " + after);
      return Completion.of(Map.of());
    });
    assertEquals(RecordState.DONE, ledger.lookup(KEY, "publish").orElseThrow().state(), "the holder still finishes");
  }

  @Test
  void theEffectThatAlwaysFollows_isClaimedByTheCompletingCommit_andRunOnThatClaim() {
    Processed analysed = assertInstanceOf(Processed.class, once.run(KEY, "analyse", Policy.DEFAULT.then("publish"),
        attempt -> Completion.of(Map.of("status", "analysed"), SideWrites.NONE)));
    Held publish = analysed.next().orElseThrow();
    assertInstanceOf(InFlight.class, once.run(KEY, "publish", this::count), "held since the analysis committed");
    assertInstanceOf(Processed.class, once.runHeld(publish, this::count));
    assertEquals(1, runs.get());
    assertInstanceOf(Duplicate.class, once.run(KEY, "publish", this::count));
  }

  @Test
  void aWarmDuplicate_isAnsweredFromWhatThisInstanceSawSettled_withoutReadingTheLedger() {
    AtomicInteger reads = new AtomicInteger();
    Ledger counting = new ForwardingLedger(ledger) {
      @Override
      public Optional<LedgerRecord> lookup(IdempotencyKey key, String effect) {
        reads.incrementAndGet();
        return super.lookup(key, effect);
      }

      @Override
      public ClaimResult claim(IdempotencyKey key, String effect, ClaimOptions options) {
        reads.incrementAndGet();
        return super.claim(key, effect, options);
      }
    };
    Once warm = new Once(counting);
    warm.run(KEY, "notify", "fp", this::count);
    int afterFirst = reads.get();

    assertInstanceOf(Duplicate.class, warm.peek(KEY, "notify", "fp").orElseThrow());
    assertInstanceOf(Duplicate.class, warm.run(KEY, "notify", "fp", this::count));
    assertInstanceOf(Conflict.class, warm.peek(KEY, "notify", "other").orElseThrow(),
        "a changed payload is still told");
    assertEquals(afterFirst, reads.get(), "no read for what this instance settled");

    Once cold = new Once(counting);
    cold.peek(KEY, "notify", "fp");
    cold.peek(KEY, "notify", "fp");
    assertEquals(afterFirst + 1, reads.get(), "another instance reads once, then knows");
    assertEquals(1, runs.get());
  }

  @Test
  void aClaimInFlight_isNeverRememberedAsSettled() {
    ledger.claim(KEY, "notify");
    assertEquals(Optional.empty(), once.peek(KEY, "notify"));
    now = now.plus(LedgerOptions.defaults().lease()).plusSeconds(1);
    assertInstanceOf(Processed.class, once.run(KEY, "notify", this::count), "taken over, not answered from memory");
  }

  @Test
  void aCompletingCommitAppliedButItsAnswerLost_isFoundOut_andTheNextEffectIsClaimedAgainAtOnce() {
    Ledger answerLost = new ForwardingLedger(ledger) {
      @Override
      public Optional<Claim> complete(Claim claim, Map<String, Object> outcome, SideWrites writes, NextClaim next) {
        super.complete(claim, outcome, writes, next);
        throw new LedgerUnavailable("Firestore did not answer within PT30S to complete the claim", null);
      }
    };
    Once lost = new Once(answerLost);
    Processed analysed = assertInstanceOf(Processed.class, lost.run(KEY, "analyse", Policy.DEFAULT.then("publish"),
        attempt -> {
          runs.incrementAndGet();
          return Completion.of(Map.of("status", "analysed"), SideWrites.NONE);
        }));
    assertTrue(analysed.next().isEmpty(), "the chained claim is not handed over: its holder does not know it");
    assertEquals(1, runs.get(), "the effect is not repeated");
    assertInstanceOf(Processed.class, once.run(KEY, "publish", this::count),
        "claimed again at once, not after a lease");
    assertEquals("once", ledger.lookup(KEY, "publish").orElseThrow().released().by());
  }

  @Test
  void aCompletionAloneWhoseAnswerIsLost_leavesTheNextEffectsLiveClaim_toItsHolder() {
    Claim publishing = assertInstanceOf(ClaimResult.Acquired.class, ledger.claim(KEY, "publish")).claim();
    Ledger answerLost = new ForwardingLedger(ledger) {
      @Override
      public Optional<Claim> complete(Claim claim, Map<String, Object> outcome, SideWrites writes, NextClaim next) {
        super.complete(claim, outcome, writes, next); // the next effect exists: completed alone
        throw new LedgerUnavailable("Firestore did not answer within PT30S to complete the claim", null);
      }
    };
    assertInstanceOf(Processed.class, new Once(answerLost).run(KEY, "analyse",
        Policy.DEFAULT.then("publish"), attempt -> Completion.of(Map.of("status", "analysed"), SideWrites.NONE)));

    LedgerRecord publish = ledger.lookup(KEY, "publish").orElseThrow();
    assertEquals(null, publish.released(), "not released: this commit did not make it");
    assertEquals(publishing.token(), publish.token());
    assertTrue(publish.leaseLive(), "its holder still holds it");
  }

  @Test
  void aCommitResentByTheClient_andRefusedAsStale_isTheHoldersOwn_soNotALostLease() {
    Ledger resent = new ForwardingLedger(ledger) {
      @Override
      public Optional<Claim> complete(Claim claim, Map<String, Object> outcome, SideWrites writes, NextClaim next) {
        super.complete(claim, outcome, writes, next);
        throw new LeaseLost("the resent commit failed its precondition");
      }
    };
    assertInstanceOf(Processed.class, new Once(resent).run(KEY, "notify", this::count));
    assertInstanceOf(Duplicate.class, once.run(KEY, "notify", this::count));
    assertEquals(1, runs.get());
  }

  @Test
  void atMostOnce_runsNoSecondTryAfterOneThatMayHaveRun_butAgainAfterARefusalBeforeAnyWork() {
    assertEquals(Refusal.Kind.NOT_PERFORMED, assertThrows(Refusal.class, () -> once.run(KEY, "email",
        Policy.atMostOnce(), attempt -> {
          runs.incrementAndGet();
          throw Refusal.notPerformed("the mailer answered 503", null);
        })).kind());
    assertThrows(IllegalStateException.class, () -> once.run(KEY, "email", Policy.atMostOnce(), attempt -> {
      runs.incrementAndGet();
      throw new IllegalStateException("timed out: it may have been sent");
    }));
    Rejected gaveUp = assertInstanceOf(Rejected.class, once.run(KEY, "email", Policy.atMostOnce(), this::count));
    assertTrue(gaveUp.gaveUp());
    assertEquals(2, runs.get(), "the refused try and the one that may have sent it; never a third");
  }

  @Test
  void theGuardsCap_isOnceMaxAttempts_fromItsSettings() {
    Once capped = Once.over(ledger, Settings.of(Map.of("ONCE_MAX_ATTEMPTS", "2")));
    assertEquals(2, capped.maxAttempts());
    assertEquals(Once.DEFAULT_MAX_ATTEMPTS, new Once(ledger).maxAttempts());
    Policy paid = Policy.DEFAULT.cappedAtMaxAttempts(reason -> SideWrites.NONE);
    for (int i = 0; i < 2; i++) {
      assertThrows(IllegalStateException.class, () -> capped.run(KEY, "analyse", paid, attempt -> {
        runs.incrementAndGet();
        throw new IllegalStateException("reset");
      }));
    }
    assertInstanceOf(Rejected.class, capped.run(KEY, "analyse", paid, this::count));
    assertEquals(2, runs.get());
    assertThrows(InvalidSetting.class,
        () -> Once.over(ledger, Settings.of(Map.of("ONCE_MAX_ATTEMPTS", "0"))));
  }

  /**
   * A function passes its own finished run on ({@link Once#pass}): the next delivery, even on the instance that had
   * the answer cached, runs the effect once more as run 2; a second pass of the same run, or of a run that is not
   * finished, moves nothing.
   */
  @Test
  void aFinishedRunPassedOn_runsOnceMore_onTheNextDelivery_andIsPassedOnOnce() {
    assertInstanceOf(Processed.class, once.run(KEY, "claim", this::count));
    assertInstanceOf(Duplicate.class, once.run(KEY, "claim", this::count)); // cached here from now on
    Once other = new Once(ledger);

    assertTrue(once.pass(KEY, "claim", 1, "its holder was given up"));
    assertFalse(other.pass(KEY, "claim", 1, "its holder was given up"), "passed on once");
    assertFalse(once.pass(KEY, "claim", 2, "not finished in run 2"));

    LedgerRecord passed = ledger.lookup(KEY, "claim").orElseThrow();
    assertEquals(List.of(2, RecordState.CLAIMED, false), List.of(passed.generation(), passed.state(),
        passed.leaseLive()));
    assertEquals("once", passed.history().get(0).by());
    assertEquals("its holder was given up", passed.history().get(0).reason());
    int[] generation = new int[1];
    Processed rerun = assertInstanceOf(Processed.class, once.run(KEY, "claim", attempt -> {
      generation[0] = attempt.generation();
      return count(attempt);
    }));
    assertEquals(2, generation[0]);
    assertEquals(2, runs.get(), "run once more, by the instance that had the first answer cached");
    assertTrue(rerun.next().isEmpty());
    assertInstanceOf(Duplicate.class, other.run(KEY, "claim", this::count));
    assertEquals(2, runs.get());
  }

  /** A rejected run passes on as a done one does; an absent record does not. */
  @Test
  void aRejectedRun_passesOn_andNoRecordIsNothingToPass() {
    assertInstanceOf(Rejected.class, once.run(KEY, "claim", attempt -> {
      throw Refusal.permanent("gone");
    }));
    assertTrue(once.pass(KEY, "claim", 1, "the next copy"));
    assertInstanceOf(Processed.class, once.run(KEY, "claim", this::count));
    assertFalse(once.pass(IdempotencyKey.of("pubsub:never"), "claim", 1, "nothing there"));
    assertTrue(ledger.lookup(IdempotencyKey.of("pubsub:never"), "claim").isEmpty());
  }

  @Test
  void effectNames_outsideTheirRule_areRefused() {
    for (String name : new String[] {"Email", "e mail", "", "x".repeat(65)}) {
      assertThrows(IllegalArgumentException.class, () -> once.run(KEY, name, this::count), name);
    }
    assertEquals(0, runs.get());
  }
}
