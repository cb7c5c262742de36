package dev.once.cli;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.auth.oauth2.AccessToken;
import com.google.auth.oauth2.GoogleCredentials;
import com.google.auth.oauth2.ImpersonatedCredentials;
import com.google.auth.oauth2.ServiceAccountCredentials;
import java.net.InetAddress;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Optional;

/**
 * Who is acting, for the record of a change (a release, an invalidation): against a deployed project the account of
 * the application default
 * credentials (a service account's email, or a user's, which Google's token info endpoint tells from the access
 * token), and no change when that cannot be told; against a local stack, the local user at this host.
 */
public final class Operator {
  private static final Duration TIMEOUT = Duration.ofSeconds(10);
  private static final String TOKEN_INFO = "https://oauth2.googleapis.com/tokeninfo?access_token=";

  private Operator() {}

  /** The authenticated account; against a deployed project, one that cannot be told is a failure, not a guess. */
  public static String name(Context context) {
    if (context.deployed()) {
      return adcAccount().orElseThrow(() -> Failure.remote("cannot tell which account the application"
          + " default credentials are (gcloud auth application-default login), so nothing is changed: the record"
          + " names the authenticated account", null));
    }
    return localUser();
  }

  /** Who acts against a local stack: user@host. */
  public static String localUser() {
    String host;
    try {
      host = InetAddress.getLocalHost().getHostName();
    } catch (Exception e) {
      host = "localhost";
    }
    return System.getProperty("user.name", "unknown") + "@" + host;
  }

  private static Optional<String> adcAccount() {
    try {
      GoogleCredentials credentials = GoogleCredentials.getApplicationDefault();
      if (credentials instanceof ServiceAccountCredentials sa) {
        return Optional.of(sa.getClientEmail());
      }
      if (credentials instanceof ImpersonatedCredentials impersonated) {
        return Optional.of(impersonated.getAccount());
      }
      credentials = credentials.createScoped("https://www.googleapis.com/auth/userinfo.email");
      credentials.refreshIfExpired();
      AccessToken token = credentials.getAccessToken();
      if (token == null) {
        return Optional.empty();
      }
      HttpClient http = HttpClient.newBuilder().connectTimeout(TIMEOUT).build();
      HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create(TOKEN_INFO
          + URLEncoder.encode(token.getTokenValue(), StandardCharsets.UTF_8))).timeout(TIMEOUT).GET().build(),
          HttpResponse.BodyHandlers.ofString());
      JsonNode info = new ObjectMapper().readTree(response.body());
      return response.statusCode() == 200 && info.hasNonNull("email")
          ? Optional.of(info.get("email").asText()) : Optional.empty();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Optional.empty();
    } catch (Exception e) {
      return Optional.empty(); // no credentials or no answer: the local user names the operator instead
    }
  }
}
