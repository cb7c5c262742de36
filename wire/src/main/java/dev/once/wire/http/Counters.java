package dev.once.wire.http;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/** Named call counters, readable from Java and (as JSON) from another process. */
public final class Counters {
  private final ConcurrentHashMap<String, LongAdder> counts = new ConcurrentHashMap<>();

  public void increment(String name) {
    counts.computeIfAbsent(name, k -> new LongAdder()).increment();
  }

  public long get(String name) {
    LongAdder adder = counts.get(name);
    return adder == null ? 0 : adder.sum();
  }

  public Map<String, Long> snapshot() {
    Map<String, Long> copy = new TreeMap<>();
    counts.forEach((name, adder) -> copy.put(name, adder.sum()));
    return copy;
  }

  public void reset() {
    counts.clear();
  }

  public ObjectNode toJson() {
    ObjectNode node = Json.object();
    snapshot().forEach(node::put);
    return node;
  }
}
