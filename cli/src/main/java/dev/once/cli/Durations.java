package dev.once.cli;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** {@code 90s}, {@code 30m}, {@code 1h}, {@code 2d}: how an operator types a span of time. */
public final class Durations implements ITypeConverter<Duration> {
  private static final Pattern SPAN = Pattern.compile("(\\d{1,9})([smhd])");

  @Override
  public Duration convert(String value) {
    return parse(value);
  }

  public static Duration parse(String value) {
    Matcher m = SPAN.matcher(value == null ? "" : value.strip());
    if (!m.matches() || Long.parseLong(m.group(1)) == 0) {
      throw new TypeConversionException("'" + value + "' is not a span of time: a positive number with s, m, h or d"
          + " (90s, 30m, 1h, 2d)");
    }
    long n = Long.parseLong(m.group(1));
    return switch (m.group(2)) {
      case "s" -> Duration.ofSeconds(n);
      case "m" -> Duration.ofMinutes(n);
      case "h" -> Duration.ofHours(n);
      default -> Duration.ofDays(n);
    };
  }

  /** The shortest of those spellings that is exact: 3600 s → 1h. */
  public static String format(Duration d) {
    long s = d.toSeconds();
    if (s % 86_400 == 0) {
      return s / 86_400 + "d";
    }
    if (s % 3600 == 0) {
      return s / 3600 + "h";
    }
    return s % 60 == 0 ? s / 60 + "m" : s + "s";
  }

  /** A measured span to the second, largest units first: {@code 1h12m5s}, {@code 40s}. */
  public static String span(Duration d) {
    long s = Math.max(0, d.toSeconds());
    StringBuilder text = new StringBuilder();
    for (long[] unit : new long[][] {{86_400, 'd'}, {3600, 'h'}, {60, 'm'}}) {
      if (s >= unit[0]) {
        text.append(s / unit[0]).append((char) unit[1]);
        s %= unit[0];
      }
    }
    return s > 0 || text.isEmpty() ? text.append(s).append('s').toString() : text.toString();
  }
}
