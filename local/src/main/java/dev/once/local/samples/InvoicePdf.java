package dev.once.local.samples;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * A small, valid one-page PDF invoice per number, built here so no binary file needs to be kept: what the tests,
 * the demo and the benchmarks upload.
 */
public final class InvoicePdf {
  private InvoicePdf() {}

  public static byte[] of(String number) {
    return of(number, 1);
  }

  /** The same invoice over {@code pages} pages, each a page object of its own (what Gemini counts tokens by). */
  public static byte[] of(String number, int pages) {
    String text = "BT /F1 12 Tf 72 720 Td (ACME Supplies Ltd - Invoice " + number + " - Total 120.00 EUR) Tj ET";
    String page = "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1"
        + " 5 0 R >> >> >>";
    StringBuilder kids = new StringBuilder("3 0 R");
    for (int more = 1; more < pages; more++) {
      kids.append(' ').append(5 + more).append(" 0 R"); // the further pages follow the font, as objects 6, 7, …
    }
    List<String> objects = new ArrayList<>(List.of(
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [" + kids + "] /Count " + pages + " >>",
        page,
        "<< /Length " + text.length() + " >>\nstream\n" + text + "\nendstream",
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"));
    for (int more = 1; more < pages; more++) {
      objects.add(page);
    }
    StringBuilder pdf = new StringBuilder("%PDF-1.4\n");
    int[] offsets = new int[objects.size()];
    for (int i = 0; i < objects.size(); i++) {
      offsets[i] = pdf.length();
      pdf.append(i + 1).append(" 0 obj\n").append(objects.get(i)).append("\nendobj\n");
    }
    int xref = pdf.length();
    pdf.append("xref\n0 ").append(objects.size() + 1).append("\n0000000000 65535 f \n");
    for (int offset : offsets) {
      pdf.append(String.format("%010d 00000 n \n", offset));
    }
    pdf.append("trailer\n<< /Size ").append(objects.size() + 1).append(" /Root 1 0 R >>\nstartxref\n")
        .append(xref).append("\n%%EOF\n");
    return pdf.toString().getBytes(StandardCharsets.US_ASCII);
  }
}
