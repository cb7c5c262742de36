package dev.once.functions.completion;

import com.google.genai.types.BatchJob;
import dev.once.gemini.BatchAnswers;
import dev.once.gemini.JobNames;
import dev.once.guard.Refusal;
import dev.once.pipeline.Gatherings;
import dev.once.pipeline.RecordQueries;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * A batch job's documents, in an order every try of its completion sees alike, so chunk N is the same documents each
 * time. A gathered job's are the members its gathering was sealed with (read a chunk at a time); a job of one
 * document, or of a gathering submitted before gatherings were sealed, the documents whose analysis names it.
 *
 * @param gathering the gathering the job was made for (null: a job of one document, made before gathering existed)
 * @param read the documents, read already (null: read a chunk at a time)
 * @param inputFile the input file the job was made from (null: inlined requests)
 * @param rules how its answers are matched, which depends on the version that made it
 */
record JobMembers(String name, String gathering, List<String> ids, List<RecordQueries.Submitted> read,
    String inputFile, BatchAnswers.Rules rules) {

  int size() {
    return ids.size();
  }

  /** Reads whose job it is, before anything is downloaded: a foreign job costs one query. */
  static final class Reader {
    private final Supplier<RecordQueries> queries;
    private final Supplier<Gatherings> gatherings;
    private final StrayJobs strays;

    Reader(Supplier<RecordQueries> queries, Supplier<Gatherings> gatherings, StrayJobs strays) {
      this.queries = queries;
      this.gatherings = gatherings;
      this.strays = strays;
    }

    /** @throws Refusal when no document waits for the job (not one of ours, early, or a stray) */
    JobMembers of(String name, Optional<BatchJob> found) throws Refusal {
      Optional<String> gathering = found.flatMap(JobNames::gatheringId);
      List<RecordQueries.Submitted> submitted = null;
      if (gathering.isEmpty()) {
        submitted = queries.get().submittedTo(name);
        // A gathered job Gemini no longer has: its documents' analyses name their gathering.
        gathering = submitted.stream().map(RecordQueries.Submitted::gathering).filter(Objects::nonNull).findFirst();
      }
      if (gathering.isPresent()) {
        Gatherings.State state = gatherings.get().state(gathering.get());
        if (name.equals(state.job()) && state.sealed()) {
          return new JobMembers(name, gathering.get(), state.members(), null, state.inputFile(),
              state.referenced() ? BatchAnswers.Rules.REFERENCED : BatchAnswers.Rules.LEGACY);
        }
        if (!name.equals(state.job()) && found.isPresent()) {
          throw strays.noDocumentWaitsFor(gathering.get(), name, found.get());
        }
      }
      if (submitted == null) {
        submitted = queries.get().submittedTo(name);
      }
      if (submitted.isEmpty()) {
        throw strays.noDocumentWaits(name, found);
      }
      // A gathering submitted before gatherings were sealed, or a job of one document made before gathering existed.
      return new JobMembers(name, gathering.orElse(null),
          submitted.stream().map(document -> document.documentKey().documentId()).toList(), submitted, null,
          gathering.isPresent() ? BatchAnswers.Rules.LEGACY : BatchAnswers.Rules.KEY);
    }

    /** The documents of chunk {@code chunk} (of {@code size} each), as they stand now. */
    List<RecordQueries.Submitted> chunk(JobMembers members, int chunk, int size) {
      int from = chunk * size;
      int to = Math.min(members.size(), from + size);
      return members.read() != null ? members.read().subList(from, to)
          : queries.get().waitingFor(members.name(), members.gathering(), members.ids().subList(from, to));
    }
  }
}
