package dev.once.cli.redrive;

import com.google.pubsub.v1.PubsubMessage;
import com.google.pubsub.v1.ReceivedMessage;
import dev.once.cli.Change;
import dev.once.cli.Context;
import dev.once.cli.Exit;
import dev.once.cli.Failure;
import dev.once.cli.inspect.KeyRecords;
import dev.once.gemini.GeminiCompletionKeys;
import dev.once.key.IdempotencyKey;
import dev.once.key.PubSubMessageKeys;
import dev.once.local.stack.Part;
import dev.once.local.stack.Topology;
import dev.once.pipeline.DocumentStatus;
import dev.once.pipeline.Effects;
import dev.once.pipeline.HttpsOnly;
import dev.once.pipeline.MessagePublisher;
import dev.once.pipeline.RecordWrites;
import dev.once.pipeline.Topics;
import dev.once.wire.eventarc.CloudEvent;
import java.io.PrintWriter;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code once redrive}: sends an event through the same path again; the ledger absorbs whatever was already done.
 *
 * <ul>
 *   <li>{@code once redrive gs://BUCKET/NAME#GENERATION --to URL}: reads the object generation's resource from Cloud
 *       Storage and POSTs the finalize CloudEvent Eventarc would make of it to DocumentUploaded.
 *   <li>{@code once redrive --dead-letter-subscription SUB}: pulls dead letters without acknowledging them, re-drives
 *       each — a finalize event POSTed to {@code --to} (or re-published to the trigger's transport topic,
 *       {@code --documents-topic}), a result message re-published to the results topic — and acknowledges it only
 *       once that was accepted.
 * </ul>
 *
 * Nothing doubles because the effects are keyed by the event's content, never by its delivery: a finalize by bucket,
 * name and generation ({@code gcs:…}), a result by its {@code idempotency_key}. A re-drive of work already done
 * costs one ledger read per effect; a re-drive whose acknowledgement is lost is re-driven again and absorbed again.
 * The ledger absorbs only what it still holds (ONCE_RETENTION_DAYS after a record's last write): an object generation
 * whose final analysis outlived its ledger record is refused unless {@code --force}.
 */
@Command(name = "redrive", mixinStandardHelpOptions = true,
    description = {"Sends an event through the same path again; the ledger absorbs what was already done (effects are"
        + " keyed by bucket/name/generation and by a result's idempotency_key, not by delivery).",
        "  once redrive gs://BUCKET/NAME#GENERATION --to URL [--force]",
        "The ledger keeps a record ONCE_RETENTION_DAYS after its last write: a generation whose analysis is final but"
            + " whose ledger record expired would be paid for again, and is refused unless --force.",
        "  once redrive --dead-letter-subscription SUB [--to URL | --documents-topic T] [--results-topic T]",
        "A deployed function's URL: gcloud functions describe FUNCTION --gen2 --region REGION"
            + " --format='value(serviceConfig.uri)'; it is private: an identity token minted for it from the"
            + " application default credentials goes with each POST, over https only."
            + " Locally the defaults are the dev/run's DocumentUploaded and results topic."},
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {"0:re-driven (every dead letter pulled, in that mode)",
        "1:nothing to re-drive: no such object generation, an empty subscription, or only messages it leaves there;"
            + " or refused: the document's analysis is final but its ledger record expired (--force re-drives it)",
        "3:the function, Cloud Storage or Pub/Sub failed or refused (a dead letter stays in its subscription)",
        "64:usage error"})
public final class RedriveCommand implements Callable<Integer> {
  /** Analysis statuses after which nothing is left to do for the document. */
  private static final Set<DocumentStatus> FINAL = EnumSet.of(DocumentStatus.ANALYSED, DocumentStatus.REJECTED,
      DocumentStatus.FAILED, DocumentStatus.DUPLICATE);

  private final Context context;

  public RedriveCommand(Context context) {
    this.context = context;
  }

  @Parameters(arity = "0..1", paramLabel = "gs://BUCKET/NAME#GENERATION",
      description = "the object generation to re-drive")
  private String object;

  @Option(names = "--to", paramLabel = "URL", description = "DocumentUploaded's URL (locally: the dev/run's)")
  private String to;

  @Option(names = "--timeout", paramLabel = "SPAN", defaultValue = "10m",
      description = "how long to wait for the function's answer (it may take its own timeout, 540 s for"
          + " DocumentUploaded; default ${DEFAULT-VALUE})")
  private Duration timeout;

  @Option(names = "--dead-letter-subscription", paramLabel = "SUB",
      description = "re-drive the dead letters this subscription holds (terraform output dead_letter_subscription;"
          + " locally dead-letter-hold)")
  private String deadLetters;

  @Option(names = "--documents-topic", paramLabel = "TOPIC",
      description = "re-publish dead-lettered finalize events to this topic (DocumentUploaded's Eventarc transport"
          + " topic) instead of POSTing them to --to")
  private String documentsTopic;

  @Option(names = "--results-topic", paramLabel = "TOPIC",
      description = "re-publish dead-lettered result messages to this topic (locally: results)")
  private String resultsTopic;

  @Option(names = "--max", paramLabel = "N", defaultValue = "10",
      description = "dead letters per run, 1-100 (default ${DEFAULT-VALUE})")
  private int max;

  @Option(names = "--list", description = "show the dead letters and hand them back, re-driving nothing")
  private boolean list;

  @Option(names = "--force", description = "re-drive a document whose analysis is final although its ledger record"
      + " has expired: it is analysed, billed, published and notified again")
  private boolean force;

  /** Made on first use: an identity token is minted only when something is POSTed. */
  private EventPoster poster;

  @Override
  public Integer call() {
    if ((object == null) == (deadLetters == null)) {
      throw Failure.usage("give either gs://BUCKET/NAME#GENERATION or --dead-letter-subscription SUB");
    }
    return object != null ? redriveObject(ObjectLocation.parse(object)) : redriveDeadLetters();
  }

  private int redriveObject(ObjectLocation location) {
    PrintWriter out = context.out();
    URI target = target(context).orElseThrow(() -> Failure.usage("--to URL is required against a deployed project"
        + " (gcloud functions describe DocumentUploaded --gen2 --region REGION --format='value(serviceConfig.uri)')"));
    ObjectResources storage = new ObjectResources(storageUrl(context));
    Optional<String> resource = storage.get(location);
    if (resource.isEmpty()) {
      out.println("nothing to re-drive: " + location + " does not exist in " + storage.describe() + " (deleted, or"
          + " replaced without versioning); DocumentUploaded would only record it as rejected");
      return Exit.NOTHING;
    }
    Optional<String> outlived = force ? Optional.empty() : analysisOutlivedLedger(context, location);
    if (outlived.isPresent()) {
      context.err().println("once redrive: refused: " + outlived.get());
      return Exit.NOTHING;
    }
    CloudEvent event = FinalizeEvents.of(location, resource.get());
    Change.confirm(context, "re-drive " + location + " to " + target);
    out.println("re-driving " + location + " (key " + location.key() + ") to " + target + " as event " + event.id());
    EventPoster.Answer answer = poster(target).post(event, target);
    if (!answer.ok()) {
      throw Failure.remote(target + " answered " + answer.status() + " after " + answer.millis() + " ms: "
          + Failure.reason(new IllegalStateException(answer.body().isBlank() ? "(no body)" : answer.body()))
          + " (Eventarc would retry; so may you: the ledger makes it safe)", null);
    }
    out.println("answered " + answer.status() + " in " + answer.millis() + " ms: delivered; the ledger ran only what"
        + " was not done (once inspect " + location + " shows each effect)");
    return Exit.OK;
  }

  /**
   * Why a re-drive would do the paid work again, if it would: the document's analysis is final but the ledger's
   * analyse record, which makes a re-drive a no-op, has expired (ONCE_RETENTION_DAYS after its last write), while
   * {@code analyses/*} and {@code billing/*} are kept. DocumentUploaded trusts the ledger alone.
   */
  private static Optional<String> analysisOutlivedLedger(Context context, ObjectLocation location) {
    IdempotencyKey key = IdempotencyKey.of(location.key());
    KeyRecords read = new KeyRecords(context.firestore());
    Optional<String> status = read.analysis(key).map(a -> a.getString("status"))
        .filter(stored -> DocumentStatus.of(stored).filter(FINAL::contains).isPresent());
    if (status.isEmpty() || read.ledger(key).containsKey(Effects.ANALYSE)) {
      return Optional.empty();
    }
    return Optional.of(location + " is " + status.get() + " (" + RecordWrites.ANALYSES + "/" + key.documentId()
        + ") but its ledger record has expired (ONCE_RETENTION_DAYS): a re-drive would analyse, bill, publish and"
        + " notify it again; --force to do that anyway");
  }

  private int redriveDeadLetters() {
    if (max < 1 || max > 100) {
      throw Failure.usage("--max must be 1-100, got " + max);
    }
    PrintWriter out = context.out();
    String project = context.project();
    String subscription = fullSubscription(project, deadLetters);
    Optional<URI> documentsUrl = documentsTopic == null ? target(context) : Optional.empty();
    Optional<String> documents = Optional.ofNullable(documentsTopic).map(t -> topic(project, t));
    Optional<String> results = Optional.ofNullable(resultsTopic).or(() -> context.deployed() ? Optional.empty()
        : Optional.of(Topology.RESULTS_TOPIC)).map(t -> topic(project, t));
    String emulator = context.env("PUBSUB_EMULATOR_HOST")
        .orElseGet(() -> context.deployed() ? null : context.localPorts().hostPort(Part.PUBSUB));
    if (!list) {
      Change.confirm(context, "re-drive up to " + max + " dead letter(s) of " + subscription + " ("
          + documents.map(t -> "documents to " + t).or(() -> documentsUrl.map(u -> "documents to " + u))
              .orElse("no documents")
          + ", " + results.map(t -> "results to " + t).orElse("no results") + ")");
    }
    try (DeadLetterSubscription held = new DeadLetterSubscription(subscription, emulator);
        MessagePublisher publisher = new MessagePublisher(emulator)) {
      List<ReceivedMessage> pulled = held.pull(max);
      if (pulled.isEmpty()) {
        out.println("nothing to re-drive: " + subscription + " holds no dead letters");
        return Exit.NOTHING;
      }
      out.println(pulled.size() + " dead letter(s) from " + subscription + (list ? " (listed, handed back)" : ""));
      List<String> leftThere = new ArrayList<>();
      int redriven = 0;
      int failed = 0;
      for (ReceivedMessage received : pulled) {
        PubsubMessage message = received.getMessage();
        DeadLetter letter = DeadLetter.of(message);
        String head = "  " + message.getMessageId() + "  " + letter.describe();
        if (list) {
          out.println(head);
          leftThere.add(received.getAckId());
          continue;
        }
        try {
          Optional<String> done = switch (letter.kind()) {
            case FINALIZE -> documents.isPresent()
                ? Optional.of("re-published to " + documents.get() + " as " + publisher.publish(documents.get(),
                    message.getData().toByteArray(), letter.republishedAttributes()))
                : documentsUrl.map(url -> post(FinalizeEvents.fromMessage(message.getAttributesMap(),
                    message.getData().toByteArray()), url));
            case RESULT -> results.map(topic -> "re-published to " + topic + " as " + publisher.publish(topic,
                message.getData().toByteArray(), letter.republishedAttributes()));
            case REFUSED, HANDOFF, UNKNOWN -> Optional.empty();
          };
          if (done.isEmpty()) {
            out.println(head + ": left there, " + letter.whyLeft());
            leftThere.add(received.getAckId());
            continue;
          }
          held.acknowledge(received.getAckId());
          redriven++;
          out.println(head + ": " + done.get() + ", acknowledged");
        } catch (RuntimeException e) {
          // Anything, also what no call here names (a letter no event can be made of, a client's own exception):
          // the letter is handed back, the others are still re-driven, and the run ends as a remote failure.
          failed++;
          leftThere.add(received.getAckId());
          out.println(
              head + ": not re-driven, left there: " + (e instanceof Failure || e instanceof IllegalStateException
                  ? "" : e.getClass().getSimpleName() + ": ") + Failure.reason(e));
        }
      }
      held.giveBack(leftThere);
      if (failed > 0) {
        context.err().println("once redrive: " + failed + " dead letter(s) could not be re-driven; they stay in "
            + subscription);
        return Exit.REMOTE;
      }
      return redriven > 0 || list ? Exit.OK : Exit.NOTHING;
    }
  }

  private String post(CloudEvent event, URI url) {
    EventPoster.Answer answer = poster(url).post(event, url);
    if (!answer.ok()) {
      throw Failure.remote(url + " answered " + answer.status(), null);
    }
    return "POSTed to " + url + ", answered " + answer.status() + " in " + answer.millis() + " ms";
  }

  /**
   * The poster for {@code target}: to this machine, no token (local functions check none); to a deployed function,
   * over https only, an identity token minted for that function's audience (made once, on the first POST).
   */
  private EventPoster poster(URI target) {
    if (poster == null) {
      poster = new EventPoster(timeout,
          HttpsOnly.isLoopback(target.getHost()) ? null : IdentityTokens.forAudience(target));
    }
    return poster;
  }

  /** DocumentUploaded's URL: --to, else the local stack's. */
  private Optional<URI> target(Context context) {
    if (to != null) {
      try {
        URI uri = URI.create(to.strip());
        if (uri.getScheme() == null || !uri.getScheme().startsWith("http") || uri.getHost() == null) {
          throw new IllegalArgumentException("not an http(s) URL");
        }
        if (!HttpsOnly.allows(uri)) {
          throw Failure.usage("--to '" + to + "' is not https: events (and the identity token) go to a deployed"
              + " function over https only, or over http to this machine");
        }
        return Optional.of(uri);
      } catch (IllegalArgumentException e) {
        throw Failure.usage("--to '" + to + "' is not an http(s) URL");
      }
    }
    return context.deployed() ? Optional.empty()
        : Optional.of(URI.create(context.localPorts().url(Part.DOCUMENT_UPLOADED) + "/"));
  }

  private static String storageUrl(Context context) {
    return context.env("STORAGE_EMULATOR_HOST").orElseGet(() -> context.deployed() ? ObjectResources.GOOGLE
        : context.localPorts().url(Part.STORAGE));
  }

  private static String topic(String project, String idOrName) {
    try {
      return Topics.fullName(project, idOrName);
    } catch (IllegalArgumentException e) {
      throw Failure.usage(e.getMessage());
    }
  }

  private static String fullSubscription(String project, String idOrName) {
    String name = idOrName.strip();
    if (name.matches("projects/[^/\\s]+/subscriptions/[^/\\s]+")) {
      return name;
    }
    if (!name.matches("[A-Za-z][A-Za-z0-9._~%+-]{2,254}")) {
      throw Failure.usage("'" + idOrName + "' is not a subscription id or projects/P/subscriptions/S name");
    }
    return Topology.subscription(project, name);
  }

  /** What a dead letter is, told by its attributes. */
  record DeadLetter(Kind kind, Map<String, String> attributes) {
    enum Kind { FINALIZE, RESULT, REFUSED, HANDOFF, UNKNOWN }

    /** Pub/Sub's dead-lettering adds these; they describe the failed delivery, not the event. */
    static final String PUBSUB_PREFIX = "CloudPubSubDeadLetter";
    /** MessageDelivered's own dead-letters: the notified endpoint refused the result for good. */
    static final String REFUSED_ATTRIBUTE = "once_error";

    static DeadLetter of(PubsubMessage message) {
      Map<String, String> attributes = message.getAttributesMap();
      Kind kind = FinalizeEvents.isFinalize(attributes) ? Kind.FINALIZE
          : attributes.containsKey(REFUSED_ATTRIBUTE) ? Kind.REFUSED
          // The webhook's hand-off of a finished batch job to BatchCompleted, keyed by the job: never a result, which
          // re-published to the results topic would be notified.
          : attributes.getOrDefault(PubSubMessageKeys.ATTRIBUTE, "").startsWith(GeminiCompletionKeys.PREFIX)
              ? Kind.HANDOFF
          : attributes.containsKey(PubSubMessageKeys.ATTRIBUTE) ? Kind.RESULT
          : Kind.UNKNOWN;
      return new DeadLetter(kind, attributes);
    }

    Map<String, String> republishedAttributes() {
      Map<String, String> kept = new LinkedHashMap<>();
      attributes.forEach((name, value) -> {
        if (!name.startsWith(PUBSUB_PREFIX)) {
          kept.put(name, value);
        }
      });
      return kept;
    }

    String describe() {
      String from = attributes.getOrDefault(PUBSUB_PREFIX + "SourceSubscription", "");
      String deliveries = attributes.getOrDefault(PUBSUB_PREFIX + "SourceDeliveryCount", "");
      String source = from.isEmpty() ? "" : " (from " + from + (deliveries.isEmpty() ? "" : " after " + deliveries
          + " deliveries") + ")";
      return switch (kind) {
        case FINALIZE -> "finalize of " + attributes.getOrDefault("ce-subject", "?") + " in "
            + attributes.getOrDefault("ce-bucket", "?") + source;
        case RESULT -> "result " + attributes.get(PubSubMessageKeys.ATTRIBUTE) + source;
        case REFUSED -> "result " + attributes.getOrDefault(PubSubMessageKeys.ATTRIBUTE, "?") + " refused by the"
            + " notified endpoint: " + attributes.get(REFUSED_ATTRIBUTE);
        case HANDOFF -> "hand-off of batch job " + attributes.get(PubSubMessageKeys.ATTRIBUTE) + " to BatchCompleted"
            + source;
        case UNKNOWN -> "a message this pipeline did not write" + source;
      };
    }

    String whyLeft() {
      return switch (kind) {
        case FINALIZE -> "a finalize event needs --to URL or --documents-topic TOPIC";
        case RESULT -> "a result message needs --results-topic TOPIC";
        case REFUSED -> "its notification is recorded as refused for good (REJECTED in the ledger): re-driving it"
            + " changes nothing; fix the receiver, then acknowledge it with gcloud";
        case HANDOFF -> "the reconciler completes the finished job on its next run whatever became of its hand-off;"
            + " acknowledge this with gcloud once it has";
        case UNKNOWN -> "neither a finalize event nor a result message";
      };
    }
  }
}
