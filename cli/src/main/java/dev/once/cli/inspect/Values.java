package dev.once.cli.inspect;

import com.google.cloud.Timestamp;
import dev.once.observe.ForeignText;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/** Firestore values in one readable line: timestamps as ISO instants, maps and lists compactly. */
public final class Values {
  private static final int MAX = 200;

  private Values() {}

  public static String text(Object value) {
    String text = render(value);
    return text.length() <= MAX ? text : ForeignText.cut(text, MAX - 1);
  }

  private static String render(Object value) {
    if (value == null) {
      return "—";
    }
    if (value instanceof Timestamp t) {
      return Instant.ofEpochSecond(t.getSeconds(), t.getNanos()).toString();
    }
    if (value instanceof Map<?, ?> map) {
      return map.entrySet().stream().map(e -> e.getKey() + "=" + render(e.getValue()))
          .collect(Collectors.joining(", ", "{", "}"));
    }
    if (value instanceof List<?> list) {
      return list.stream().map(Values::render).collect(Collectors.joining(", ", "[", "]"));
    }
    return String.valueOf(value).replaceAll("\\s+", " ");
  }

  public static String instant(Instant instant) {
    return instant == null ? "—" : instant.toString();
  }
}
