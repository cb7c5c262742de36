package dev.once.local.stack;

import dev.once.local.emulator.FreePort;
import java.util.Collections;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.Map;

/** The port of every part: its default, or the value of its {@code ONCE_…_PORT} variable. */
public record Ports(Map<Part, Integer> byPart) {
  public Ports {
    EnumMap<Part, Integer> copy = new EnumMap<>(Part.class);
    copy.putAll(byPart);
    for (Part part : Part.values()) {
      if (!copy.containsKey(part)) {
        throw new IllegalArgumentException("no port for " + part.title());
      }
    }
    Map<Integer, Part> seen = new HashMap<>();
    for (Map.Entry<Part, Integer> entry : copy.entrySet()) {
      Part other = seen.putIfAbsent(entry.getValue(), entry.getKey());
      if (other != null) {
        throw new IllegalArgumentException("port " + entry.getValue() + " is given to both " + other.title() + " ("
            + other.portVariable() + ") and " + entry.getKey().title() + " (" + entry.getKey().portVariable() + ")");
      }
    }
    byPart = Collections.unmodifiableMap(copy);
  }

  public static Ports defaults() {
    return fromEnvironment(Map.of());
  }

  /** Defaults, overridden by {@code ONCE_<PART>_PORT}; a value that is not a port is an error naming the variable. */
  public static Ports fromEnvironment(Map<String, String> env) {
    Map<Part, Integer> ports = new EnumMap<>(Part.class);
    for (Part part : Part.values()) {
      String value = env.get(part.portVariable());
      ports.put(part, value == null || value.isBlank() ? part.defaultPort() : parse(part, value.strip()));
    }
    return new Ports(ports);
  }

  /** Free ports for every part: how tests run a stack beside a developer's {@code dev/run}. */
  public static Ports free() {
    Map<Part, Integer> ports = new EnumMap<>(Part.class);
    for (Part part : Part.values()) {
      int port;
      do {
        port = FreePort.pick();
      } while (ports.containsValue(port));
      ports.put(part, port);
    }
    return new Ports(ports);
  }

  private static int parse(Part part, String value) {
    try {
      int port = Integer.parseInt(value);
      if (port >= 1 && port <= 65535) {
        return port;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new IllegalArgumentException(part.portVariable() + " must be a port number (1-65535), got \"" + value + "\"");
  }

  public int of(Part part) {
    return byPart.get(part);
  }

  public String hostPort(Part part) {
    return "127.0.0.1:" + of(part);
  }

  public String url(Part part) {
    return "http://" + hostPort(part);
  }

  /** The variables that reproduce these ports in another process (a runner started by a test). */
  public Map<String, String> asEnvironment() {
    Map<String, String> env = new HashMap<>();
    byPart.forEach((part, port) -> env.put(part.portVariable(), String.valueOf(port)));
    return env;
  }
}
