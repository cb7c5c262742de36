package dev.once.gemini;

import com.google.genai.types.Schema;
import com.google.genai.types.Type;
import java.util.List;
import java.util.Map;

/** The JSON shape Gemini must answer an invoice analysis in (its response schema). */
public final class InvoiceSchema {
  public static final Schema SCHEMA = build();

  private InvoiceSchema() {}

  private static Schema build() {
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
    return Schema.builder()
        .type(Type.Known.OBJECT)
        .properties(Map.of(
            "supplier", text("legal name of the issuer"),
            "invoiceNumber", text("the invoice's own number"),
            "issueDate", date("date of issue"),
            "dueDate", date("payment due date, if stated"),
            "currency", Schema.builder().type(Type.Known.STRING).description("ISO 4217 code").pattern("^[A-Z]{3}$").build(),
            "subtotal", number("total before tax"),
            "tax", number("total tax"),
            "total", number("amount due, tax included"),
            "lineItems", Schema.builder().type(Type.Known.ARRAY).items(lineItem).build()))
        .propertyOrdering(List.of(
            "supplier", "invoiceNumber", "issueDate", "dueDate", "currency", "subtotal", "tax", "total", "lineItems"))
        .required("supplier", "invoiceNumber", "issueDate", "currency", "total")
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
