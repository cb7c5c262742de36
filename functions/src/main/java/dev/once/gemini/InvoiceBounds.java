package dev.once.gemini;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.once.observe.ForeignText;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * An invoice as the model wrote it, held to limits of our own before it reaches any record or message: the model
 * writes what the document says, and anyone can upload a document. Only the schema's fields are kept; a text longer
 * than {@link #MAX_TEXT_CHARS} is cut (ending "…"); at most {@link #MAX_LINE_ITEMS} line items, and line items are
 * dropped from the end until the whole is at most {@link #MAX_JSON_BYTES} of JSON. What was cut is named
 * ({@code truncated}). So an analysis is at most 24 KiB of invoice however long its supplier's name, and a completion
 * chunk of 100 of them stays a commit Firestore (and its emulator's 4 MiB) takes.
 */
public final class InvoiceBounds {
  public static final int MAX_TEXT_CHARS = 300;
  public static final int MAX_LINE_ITEMS = 100;
  public static final int MAX_JSON_BYTES = 24 * 1024;
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Set<String> ITEM_FIELDS = Set.of("description", "quantity", "unitPrice", "amount");

  private InvoiceBounds() {}

  /** An invoice within the bounds, and the names of the fields that were cut to get there (empty: none). */
  public record Bounded(Map<String, Object> invoice, List<String> truncated) {}

  public static Bounded bound(Map<String, Object> invoice) {
    Set<String> truncated = new LinkedHashSet<>();
    Set<String> fields = InvoiceSchema.REFERENCED.properties().orElseThrow().keySet();
    Map<String, Object> kept = new LinkedHashMap<>();
    invoice.forEach((field, value) -> {
      if (!fields.contains(field)) {
        truncated.add("(fields outside the schema)");
      } else if ("lineItems".equals(field)) {
        kept.put(field, lineItems(value, truncated));
      } else {
        kept.put(field, text(field, value, truncated));
      }
    });
    if (kept.get("lineItems") instanceof List<?> items && !items.isEmpty() && jsonBytes(kept) > MAX_JSON_BYTES) {
      List<Object> fitting = new ArrayList<>(items);
      while (!fitting.isEmpty() && jsonBytes(kept) > MAX_JSON_BYTES) {
        fitting.remove(fitting.size() - 1);
        kept.put("lineItems", List.copyOf(fitting));
      }
      truncated.add("lineItems");
    }
    return new Bounded(kept, List.copyOf(truncated));
  }

  private static Object lineItems(Object value, Set<String> truncated) {
    if (!(value instanceof List<?> items)) {
      return text("lineItems", value, truncated);
    }
    if (items.size() > MAX_LINE_ITEMS) {
      truncated.add("lineItems");
    }
    List<Object> kept = new ArrayList<>();
    for (Object item : items.subList(0, Math.min(items.size(), MAX_LINE_ITEMS))) {
      if (item instanceof Map<?, ?> fields) {
        Map<String, Object> line = new LinkedHashMap<>();
        fields.forEach((name, field) -> {
          if (ITEM_FIELDS.contains(String.valueOf(name))) {
            line.put(String.valueOf(name), text("lineItems", field, truncated));
          } else {
            truncated.add("lineItems");
          }
        });
        kept.add(line);
      } else {
        kept.add(text("lineItems", item, truncated));
      }
    }
    return kept;
  }

  /** A scalar as it is; a text cut at {@link #MAX_TEXT_CHARS}; anything nested where a scalar belongs, as its text. */
  private static Object text(String field, Object value, Set<String> truncated) {
    String text;
    if (value instanceof String s) {
      text = s;
    } else if (value instanceof Map<?, ?> || value instanceof List<?>) {
      text = String.valueOf(value);
    } else {
      return value;
    }
    if (text.length() <= MAX_TEXT_CHARS) {
      return text;
    }
    truncated.add(field);
    return ForeignText.cut(text, MAX_TEXT_CHARS);
  }

  private static int jsonBytes(Map<String, Object> invoice) {
    try {
      return JSON.writeValueAsString(invoice).getBytes(StandardCharsets.UTF_8).length;
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("an invoice read from JSON is JSON again", e);
    }
  }
}
