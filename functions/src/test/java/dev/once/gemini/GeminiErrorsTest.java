package dev.once.gemini;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.genai.errors.ApiException;
import com.google.genai.types.GenerateContentResponse;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class GeminiErrorsTest {
  @Test
  void onlyARequestGeminiCannotReadIsTheDocumentsFault() {
    assertTrue(GeminiErrors.isPermanent(new ApiException(400, "INVALID_ARGUMENT", "Request contains an invalid argument.")));
    assertTrue(GeminiErrors.isPermanent(new ApiException(413, "PAYLOAD_TOO_LARGE", "too large")));
    assertTrue(GeminiErrors.isPermanent(new RuntimeException(new ApiException(400, "INVALID_ARGUMENT", "bad pdf"))));
  }

  @Test
  void aBadKeyOrProject_isNeverTheDocumentsFault_soNoDocumentIsLostToIt() {
    assertFalse(GeminiErrors.isPermanent(new ApiException(400, "INVALID_ARGUMENT",
        "API key not valid. Please pass a valid API key.")));
    assertFalse(GeminiErrors.isPermanent(new ApiException(400, "FAILED_PRECONDITION",
        "User location is not supported for the API use.")));
    for (int code : new int[] {401, 403, 404, 408, 429, 500, 503}) {
      assertFalse(GeminiErrors.isPermanent(new ApiException(code, "X", "m")), "code " + code);
    }
    assertFalse(GeminiErrors.isPermanent(new IllegalStateException("timeout")));
  }

  @Test
  void numbersBeyond64Bits_becomeDoubles_soTheAnalysisCanBeStored() {
    GenerateContentResponse response = GenerateContentResponse.fromJson("""
        {"candidates":[{"content":{"role":"model","parts":[{"text":
          "{\\"total\\": 1000000000000000000000000000000, \\"lineItems\\": [{\\"amount\\": 99999999999999999999}], \\"tax\\": 1.5}"
        }]}}]}""");
    Analysis analysis = InvoiceAnalyzer.interpret("m", response);
    assertTrue(analysis.succeeded(), String.valueOf(analysis.failure()));
    assertInstanceOf(Double.class, analysis.invoice().get("total"));
    assertEquals(1e30, (Double) analysis.invoice().get("total"));
    @SuppressWarnings("unchecked")
    List<Map<String, Object>> items = (List<Map<String, Object>>) analysis.invoice().get("lineItems");
    assertInstanceOf(Double.class, items.get(0).get("amount"));
    assertEquals(1.5, analysis.invoice().get("tax"));
  }
}
