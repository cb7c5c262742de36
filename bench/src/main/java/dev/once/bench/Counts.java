package dev.once.bench;

import dev.once.pipeline.Effects;

/**
 * What a run of documents left behind, counted where it lands: analyses (and those with status {@code analysed}),
 * billing entries, completed {@code publish} ledger records (one per published result), and the Gemini stand-in's
 * generateContent calls.
 */
record Counts(long analyses, long analysed, long bills, long published, long geminiCalls) {
  static Counts of(BenchStack stack, long geminiCalls) {
    return new Counts(
        stack.count(stack.db.collection("analyses")),
        stack.count(stack.db.collection("analyses").whereEqualTo("status", "analysed")),
        stack.count(stack.db.collection("billing")),
        stack.count(
            stack.db.collection("idempotency").whereEqualTo("effect", Effects.PUBLISH).whereEqualTo("state", "DONE")),
        geminiCalls);
  }

  /** Fails loudly, naming every count that is off: a benchmark that doubles an effect has no figure to report. */
  void requireExactly(String run, long documents, long expectedGeminiCalls) {
    if (analyses != documents || analysed != documents || bills != documents || published != documents
        || geminiCalls != expectedGeminiCalls) {
      throw new IllegalStateException(run + ": expected exactly " + documents + " analyses, bills and publications"
          + " and " + expectedGeminiCalls + " Gemini calls, got " + this);
    }
  }

  @Override
  public String toString() {
    return String.format("analyses %d (analysed %d), bills %d, published %d, Gemini calls %d",
        analyses, analysed, bills, published, geminiCalls);
  }
}
