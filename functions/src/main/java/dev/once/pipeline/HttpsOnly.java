package dev.once.pipeline;

import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * Where the pipeline sends or fetches anything that must not be read or changed on the way (a signed result, Google's
 * keys, the webhook's own URL): https only. Plain http is allowed to this machine alone (localhost, 127.0.0.0/8,
 * [::1]), deliberately, for local runs and tests: nothing leaves the host there. Names are never resolved: a name
 * that merely resolves to a loopback address is not "this machine" to a reader of the setting.
 */
public final class HttpsOnly {
  private static final Pattern IPV4 = Pattern.compile("\\d{1,3}(\\.\\d{1,3}){3}");

  private HttpsOnly() {}

  /** An https URL with a host, or an http one to a loopback host. */
  public static boolean allows(URI url) {
    if (url == null || url.getHost() == null) {
      return false;
    }
    String scheme = url.getScheme() == null ? "" : url.getScheme().toLowerCase(Locale.ROOT);
    return scheme.equals("https") || scheme.equals("http") && isLoopback(url.getHost());
  }

  /** localhost, or a literal loopback address (127.0.0.0/8, ::1); a name is never resolved. */
  public static boolean isLoopback(String host) {
    String bare = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
    if (bare.equalsIgnoreCase("localhost")) {
      return true;
    }
    if (!IPV4.matcher(bare).matches() && !bare.contains(":")) {
      return false; // a name: not resolved
    }
    try {
      return InetAddress.getByName(bare).isLoopbackAddress(); // a literal address: parsed, no lookup
    } catch (UnknownHostException e) {
      return false;
    }
  }
}
