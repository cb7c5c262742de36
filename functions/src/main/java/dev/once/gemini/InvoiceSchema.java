package dev.once.gemini;

import com.google.genai.types.Schema;
import com.google.genai.types.Type;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The JSON shape Gemini must answer an invoice analysis in (its response schema). A batch job's requests use
 * {@link #REFERENCED}: the same, led by {@link #REFERENCE}, which the prompt gives and the model copies, so an answer
 * names its document even when its job files it under another's key or none. First in the property order, since
 * Gemini writes properties in that order: an answer cut short at its token bound still starts with it.
 */
public final class InvoiceSchema {
  /** The property a batch answer copies its document's reference into. */
  public static final String REFERENCE = "documentReference";
  public static final Schema SCHEMA = build(false);
  public static final Schema REFERENCED = build(true);

  private InvoiceSchema() {}

  private static Schema build(boolean referenced) {
    Schema lineItem = Schema.builder()
        .type(Type.Known.OBJECT)
        .properties(Map.of(
            "description", text("what was sold"),
            "quantity", number("quantity"),
            "unitPrice", number("price of one unit"),
            "amount", number("line total")))
        .propertyOrdering(List.of("description", "quantity", "unitPrice", "amount"))
        .required("description", "amount")
        .build();
    Map<String, Schema> properties = new LinkedHashMap<>(Map.of(
        "supplier", text("legal name of the issuer"),
        "invoiceNumber", text("the invoice's own number"),
        "issueDate", date("date of issue"),
        "dueDate", date("payment due date, if stated"),
        "currency", Schema.builder().type(Type.Known.STRING).description("ISO 4217 code").pattern("^[A-Z]{3}$").build(),
        "subtotal", number("total before tax"),
        "tax", number("total tax"),
        "total", number("amount due, tax included"),
        "lineItems", Schema.builder().type(Type.Known.ARRAY).items(lineItem).build()));
    List<String> order = new ArrayList<>(List.of(
        "supplier", "invoiceNumber", "issueDate", "dueDate", "currency", "subtotal", "tax", "total", "lineItems"));
    List<String> required = new ArrayList<>(List.of("supplier", "invoiceNumber", "issueDate", "currency",
        "total"));
    if (referenced) {
      properties.put(REFERENCE, Schema.builder().type(Type.Known.STRING)
          .description("the document reference the request gives, copied exactly").pattern("^[0-9a-f]{16}$").build());
      order.add(0, REFERENCE);
      required.add(0, REFERENCE);
    }
    return Schema.builder()
        .type(Type.Known.OBJECT)
        .properties(properties)
        .propertyOrdering(order)
        .required(required)
        .build();
  }

  private static Schema text(String description) {
    return Schema.builder().type(Type.Known.STRING).description(description).build();
  }

  private static Schema date(String description) {
    return Schema.builder().type(Type.Known.STRING).format("date").description(description + ", YYYY-MM-DD").build();
  }

  private static Schema number(String description) {
    return Schema.builder().type(Type.Known.NUMBER).description(description).build();
  }
}
