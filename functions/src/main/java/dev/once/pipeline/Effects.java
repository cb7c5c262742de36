package dev.once.pipeline;

import java.util.List;

/** Names of the effects guarded in the ledger; each is run at most once per key. */
public final class Effects {
  /**
   * The paid Gemini work for a document: a generateContent call with its analysis and billing records (sync
   * mode), or the submission of its batch job (batch mode). One name for both, so a document is analysed once
   * even when its deliveries reach revisions of both modes.
   */
  public static final String ANALYSE = "analyse";
  /**
   * The first document of some content (bytes, type, bucket): keyed by the content ({@code content:…}), it records
   * which document key is analysed for it, so a copy uploaded under another name or generation is not paid again.
   */
  public static final String CONTENT = "content";
  /** The submission of a gathered batch job (batch mode): its one batches.create, keyed by its gathering. */
  public static final String SUBMIT = "submit";
  /** The completion of a batch job: its analyses and billing records. */
  public static final String COMPLETE = "complete";
  /** The publication of a result on the results topic. */
  public static final String PUBLISH = "publish";
  /** The notification of a result. */
  public static final String NOTIFY = "notify";
  /** The dead-lettering of a message whose notification was refused for good. */
  public static final String DEAD_LETTER = "dead-letter";

  /** In the order an event meets them. */
  public static final List<String> ALL = List.of(CONTENT, ANALYSE, SUBMIT, COMPLETE, PUBLISH, NOTIFY, DEAD_LETTER);

  private Effects() {}
}
