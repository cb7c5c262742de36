package dev.once.functions;

/** Names of the effects guarded in the ledger; each is run at most once per key. */
final class Effects {
  /**
   * The paid Gemini work for a document: a generateContent call with its analysis and billing records (sync
   * mode), or the submission of its batch job (batch mode). One name for both, so a document is analysed once
   * even when its deliveries reach revisions of both modes.
   */
  static final String ANALYSE = "analyse";
  /** The completion of a batch job: its analyses and billing records. */
  static final String COMPLETE = "complete";
  /** The publication of a result on the results topic. */
  static final String PUBLISH = "publish";
  /** The notification of a result. */
  static final String NOTIFY = "notify";
  /** The dead-lettering of a message whose notification was refused for good. */
  static final String DEAD_LETTER = "dead-letter";

  private Effects() {}
}
