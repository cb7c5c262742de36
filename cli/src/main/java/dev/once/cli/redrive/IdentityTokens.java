package dev.once.cli.redrive;

import com.google.auth.oauth2.GoogleCredentials;
import com.google.auth.oauth2.IdTokenCredentials;
import com.google.auth.oauth2.IdTokenProvider;
import dev.once.cli.Failure;
import java.io.IOException;
import java.net.URI;

/**
 * An identity token for calling a private function, minted from the application default credentials for that
 * function alone (its audience: the URL's scheme and host, which Cloud Run checks with the roles/run.invoker grants),
 * and sent over https only. Never taken from the command line, where other users of the machine could read it, and
 * never sent to a host other than the one it was made for.
 */
final class IdentityTokens {
  private IdentityTokens() {}

  /** The audience a token for {@code target} is made for: {@code https://host[:port]}. */
  static String audience(URI target) {
    return "https://" + target.getRawAuthority();
  }

  static String forAudience(URI target) {
    if (!"https".equals(target.getScheme())) {
      throw Failure.usage("an identity token is sent over https only, not to " + target);
    }
    try {
      GoogleCredentials credentials = GoogleCredentials.getApplicationDefault();
      if (!(credentials instanceof IdTokenProvider provider)) {
        throw Failure.remote("the application default credentials (" + credentials.getClass().getSimpleName()
            + ") cannot mint identity tokens: use a user or service account login"
            + " (gcloud auth application-default login)", null);
      }
      IdTokenCredentials token = IdTokenCredentials.newBuilder().setIdTokenProvider(provider)
          .setTargetAudience(audience(target)).build();
      token.refresh();
      return token.getIdToken().getTokenValue();
    } catch (IOException e) {
      throw Failure.remote("could not mint an identity token for " + audience(target) + ": " + Failure.reason(e), e);
    }
  }
}
