package dev.once.cli.webhook;

import com.google.genai.Client;
import com.google.genai.errors.ApiException;
import com.google.genai.gaos.Webhooks;
import com.google.genai.gaos.models.webhooks.RevocationBehavior;
import com.google.genai.gaos.models.webhooks.RotateSigningSecretRequest;
import com.google.genai.gaos.models.webhooks.SigningSecret;
import com.google.genai.gaos.models.webhooks.Webhook;
import com.google.genai.gaos.models.webhooks.WebhookInput;
import com.google.genai.gaos.models.webhooks.WebhookListResponse;
import com.google.genai.gaos.models.webhooks.WebhookState;
import com.google.genai.gaos.models.webhooks.WebhookSubscribedEvent;
import dev.once.cli.Change;
import dev.once.cli.Context;
import dev.once.cli.Exit;
import dev.once.cli.Failure;
import dev.once.cli.GeminiConnection;
import dev.once.gemini.GeminiSetting;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.function.Function;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParentCommand;

/**
 * {@code once webhook register|rotate|ping|delete|list}: the Gemini API's static webhook, through google-genai's own
 * Webhooks API ({@code Client.webhooks}, the Gemini WebhookService, v1beta). Every call has a timeout and no SDK
 * retry: creating a webhook and rotating its secret are not idempotent, so a call that timed out may have been
 * carried out, and the tool says what to look at before trying again.
 *
 * <p>A signing secret is printed alone on standard output (everything else goes to standard error), so it can be
 * piped straight into Secret Manager: {@code once webhook register --url … | gcloud secrets versions add
 * once-gemini-webhook-secret --data-file=-}.
 */
@Command(name = "webhook", mixinStandardHelpOptions = true,
    description = {"The Gemini API's static webhook, through google-genai's Webhooks API: GEMINI_API_KEY (required),"
        + " GEMINI_BASE_URL (a stand-in). A new signing secret goes alone to standard output, for"
        + " '| gcloud secrets versions add SECRET --data-file=-'; everything else to standard error."},
    subcommands = {WebhookCommand.Register.class, WebhookCommand.Rotate.class, WebhookCommand.Ping.class,
        WebhookCommand.Delete.class, WebhookCommand.ListCommand.class},
    exitCodeListHeading = "%nExit codes:%n",
    exitCodeList = {"0:done", "1:no such webhook", "3:the Gemini API failed or refused, or did not answer in time",
        "64:usage error (GEMINI_API_KEY missing)"})
public final class WebhookCommand implements Runnable {
  /**
   * The batch events the pipeline completes jobs on (GeminiWebhook ignores the others): those of the webhooks API
   * reference. The guide's {@code batch.cancelled} is neither there nor in google-genai's enum (2.3.0), and is
   * reported refused: a cancelled job is found by the reconciler, which lists the jobs.
   */
  static final List<WebhookSubscribedEvent> BATCH_EVENTS = List.of(WebhookSubscribedEvent.BATCH_SUCCEEDED,
      WebhookSubscribedEvent.BATCH_FAILED, WebhookSubscribedEvent.BATCH_EXPIRED);

  /** https://ai.google.dev/api/webhooks: "This API is in Beta. Endpoints are under /v1beta/." */
  static final String API_VERSION = "v1beta";

  private final Context context;

  public WebhookCommand(Context context) {
    this.context = context;
  }

  @Option(names = "--timeout", paramLabel = "SPAN", defaultValue = "30s", scope = picocli.CommandLine.ScopeType.INHERIT,
      description = "bound on the call (default ${DEFAULT-VALUE})")
  private Duration timeout;

  @picocli.CommandLine.Spec
  private picocli.CommandLine.Model.CommandSpec spec;

  @Override
  public void run() {
    throw new picocli.CommandLine.ParameterException(spec.commandLine(),
        "name a webhook command: register, rotate, ping, delete, list");
  }

  /** Runs one call on the SDK's Webhooks API; a failure becomes one line and exit 1 (404) or 3. */
  <T> T call(String what, Function<Webhooks, T> call, String ifTimedOut) {
    // Google documents the WebhookService under v1beta only; the SDK would otherwise call /v1/webhooks.
    try (Client client = GeminiConnection.open(context, timeout, API_VERSION, "the webhook API")) {
      return call.apply(client.webhooks);
    } catch (ApiException e) {
      if (e.code() == 404) {
        throw new NotFound(what + ": the Gemini API has no such webhook (once webhook list shows them)");
      }
      throw Failure.remote(what + ": the Gemini API answered " + e.code() + ": " + Failure.reason(e), e);
    } catch (Failure | NotFound e) {
      throw e;
    } catch (RuntimeException e) {
      throw Failure.remote(what + " failed: " + Failure.reason(e) + (ifTimedOut == null ? "" : " (" + ifTimedOut + ")"),
          e);
    }
  }

  /** The gate of every change (Change): names it, the project and the account, and asks. */
  void confirm(String what) {
    Optional<String> baseUrl = context.settings().optional(GeminiSetting.GEMINI_BASE_URL);
    Change.confirm(context, what + " with the Gemini API " + baseUrl.map(u -> "stand-in at " + u)
        .orElse("(the project of GEMINI_API_KEY)"));
  }

  PrintWriter out() {
    return context.out();
  }

  PrintWriter err() {
    return context.err();
  }

  /** A 404: the subcommands answer exit 1. */
  static final class NotFound extends RuntimeException {
    private static final long serialVersionUID = 1L;

    NotFound(String message) {
      super(message);
    }
  }

  /** Runs a subcommand's call, turning a 404 into its message and exit 1. */
  static int run(WebhookCommand parent, Callable<Integer> body) throws Exception {
    try {
      return body.call();
    } catch (NotFound e) {
      parent.err().println("once webhook: " + e.getMessage());
      return Exit.NOTHING;
    }
  }

  static String describe(Webhook w) {
    return w.id().orElse("?") + "  " + w.uri().orElse("?") + "  " + w.state().map(WebhookState::value).orElse("?")
        + "  events " + w.subscribedEvents().map(l -> l.stream().map(WebhookSubscribedEvent::value).toList().toString())
            .orElse("[]")
        + w.name().map(n -> "  name " + n).orElse("")
        + w.signingSecrets().map(s -> "  secrets " + s.stream().map(WebhookCommand::secret).toList()).orElse("");
  }

  private static String secret(SigningSecret s) {
    return s.truncatedSecret().orElse("?") + s.expireTime().map(t -> " (expires " + t + ")").orElse("");
  }

  @Command(name = "register", mixinStandardHelpOptions = true,
      description = {"Registers URL (the GeminiWebhook function: terraform output -raw webhook_url) as a static webhook"
          + " for the batch events, and prints its signing secret alone on standard output (Gemini shows it once)."})
  static final class Register implements Callable<Integer> {
    @ParentCommand
    private WebhookCommand parent;

    @Option(names = "--url", required = true, paramLabel = "URL", description = "where Gemini sends the events")
    private String url;

    @Option(names = "--name", paramLabel = "NAME", defaultValue = "once", description = "default ${DEFAULT-VALUE}")
    private String name;

    @Override
    public Integer call() throws Exception {
      if (!url.startsWith("https://") && !url.startsWith("http://")) {
        throw Failure.usage("--url must be an http(s) URL, got '" + url + "'");
      }
      parent.confirm("register a webhook for " + url);
      return run(parent, () -> {
        Webhook created = parent.call("registering " + url,
            webhooks -> webhooks.create(WebhookInput.builder().name(name).uri(url).subscribedEvents(BATCH_EVENTS)
                .build()).webhook().orElseThrow(() -> Failure.remote("the Gemini API answered no webhook", null)),
            "it may have been created anyway: once webhook list shows it; delete the copy you do not keep");
        parent.err().println("registered " + describe(created));
        Optional<String> secret = created.newSigningSecret();
        if (secret.isEmpty()) {
          parent.err()
              .println("the Gemini API returned no signing secret: once webhook rotate " + created.id().orElse("ID")
                  + " makes one");
          return Exit.REMOTE;
        }
        parent.err().println("its signing secret follows on standard output; Gemini will not show it again. Store it:"
            + " ... | gcloud secrets versions add once-gemini-webhook-secret --data-file=-");
        parent.out().println(secret.get());
        return Exit.OK;
      });
    }
  }

  @Command(name = "rotate", mixinStandardHelpOptions = true,
      description = {"Makes a new signing secret for webhook ID and prints it alone on standard output. The old one"
          + " keeps signing for 24 hours (--revoke-now: not at all), so GEMINI_WEBHOOK_SECRET can hold both"
          + " meanwhile (docs/OPERATIONS.md: roll the webhook secret)."})
  static final class Rotate implements Callable<Integer> {
    @ParentCommand
    private WebhookCommand parent;

    @Parameters(paramLabel = "ID", description = "the webhook's id (once webhook list)")
    private String id;

    @Option(names = "--revoke-now", description = "revoke the previous secrets at once instead of after 24 hours")
    private boolean revokeNow;

    @Override
    public Integer call() throws Exception {
      RevocationBehavior behavior = revokeNow ? RevocationBehavior.REVOKE_PREVIOUS_SECRETS_IMMEDIATELY
          : RevocationBehavior.REVOKE_PREVIOUS_SECRETS_AFTER_H24;
      parent.confirm("rotate the signing secret of webhook " + id
          + (revokeNow ? ", revoking the previous ones now" : ""));
      return run(parent, () -> {
        String secret = parent.call("rotating the secret of " + id,
            webhooks -> webhooks.rotateSigningSecret(id, RotateSigningSecretRequest.builder()
                .revocationBehavior(behavior).build()).webhookRotateSigningSecretResponse()
                .flatMap(r -> r.secret()).orElseThrow(() -> Failure.remote("the Gemini API answered no secret", null)),
            "a new secret may have been made and lost: rotate again");
        parent.err().println("rotated the signing secret of " + id + "; previous secrets "
            + (revokeNow ? "are revoked now" : "keep signing for 24 hours")
            + ". The new one follows on standard output.");
        parent.out().println(secret);
        return Exit.OK;
      });
    }
  }

  @Command(name = "ping", mixinStandardHelpOptions = true,
      description = {"Asks Gemini to send webhook ID a test event (GeminiWebhook answers a signed event of another"
          + " type 200 ignored, and logs it)."})
  static final class Ping implements Callable<Integer> {
    @ParentCommand
    private WebhookCommand parent;

    @Parameters(paramLabel = "ID")
    private String id;

    @Override
    public Integer call() throws Exception {
      return run(parent, () -> {
        parent.call("pinging " + id, webhooks -> webhooks.ping(id), null);
        parent.out().println("pinged " + id + ": Gemini sends it a test event (the GeminiWebhook log shows it arrive)");
        return Exit.OK;
      });
    }
  }

  @Command(name = "delete", mixinStandardHelpOptions = true, description = "Deletes webhook ID.")
  static final class Delete implements Callable<Integer> {
    @ParentCommand
    private WebhookCommand parent;

    @Parameters(paramLabel = "ID")
    private String id;

    @Override
    public Integer call() throws Exception {
      parent.confirm("delete webhook " + id);
      return run(parent, () -> {
        parent.call("deleting " + id, webhooks -> webhooks.delete(id), null);
        parent.out().println("deleted " + id + " (batch jobs now complete through the reconciler alone)");
        return Exit.OK;
      });
    }
  }

  @Command(name = "list", mixinStandardHelpOptions = true, description = "Lists the project's webhooks.")
  static final class ListCommand implements Callable<Integer> {
    @ParentCommand
    private WebhookCommand parent;

    @Override
    public Integer call() throws Exception {
      return run(parent, () -> {
        List<Webhook> all = new ArrayList<>();
        String page = null;
        do {
          String token = page;
          WebhookListResponse response = parent.call("listing webhooks",
              webhooks -> webhooks.list(null, 100, token, null).webhookListResponse()
                  .orElse(new WebhookListResponse()),
              null);
          response.webhooks().ifPresent(all::addAll);
          page = response.nextPageToken().filter(t -> !t.isEmpty()).orElse(null);
        } while (page != null);
        all.forEach(w -> parent.out().println(describe(w)));
        if (all.isEmpty()) {
          parent.out().println("no webhooks");
          return Exit.NOTHING;
        }
        return Exit.OK;
      });
    }
  }
}
