package dev.once.local.gemini;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.once.local.http.HttpError;
import dev.once.local.http.Json;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.EnumMap;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The stand-in's "model": validates a {@code GenerateContentRequest} the way the API does, and answers with one
 * candidate whose text is derived from a hash of the request (same request, same answer). When the request
 * carries {@code generationConfig.responseSchema} or {@code responseJsonSchema}, the text is JSON that validates
 * against it. Token counts are derived from the input size, so billing code sees plausible, repeatable numbers.
 */
final class ContentGenerator {
  private static final Set<String> ROLES = Set.of("user", "model", "function", "tool");
  private static final Set<String> PART_KINDS = Set.of("text", "inlineData", "fileData", "functionCall",
      "functionResponse", "executableCode", "codeExecutionResult");

  enum Modality { TEXT, IMAGE, DOCUMENT, AUDIO, VIDEO }

  private ContentGenerator() {}

  /** Checks the request and answers it; a malformed request is an {@link HttpError} 400 as the API reports it. */
  static ObjectNode generate(String modelId, JsonNode request) {
    Map<Modality, Integer> promptTokens = validateAndCount(request);
    JsonNode config = request.path("generationConfig");
    long seed = seed(modelId, request);
    String text = answer(config, request, seed);
    int outputTokens = Math.max(1, ceilDiv(text.getBytes(StandardCharsets.UTF_8).length, 4));
    int prompt = promptTokens.values().stream().mapToInt(Integer::intValue).sum();
    String finishReason = "STOP";
    int maxOutput = config.path("maxOutputTokens").asInt(0);
    if (maxOutput > 0 && outputTokens > maxOutput) {
      // As the API does: the answer stops at the bound, mid-JSON if need be, and says why.
      text = truncate(text, maxOutput * 4);
      outputTokens = maxOutput;
      finishReason = "MAX_TOKENS";
    }

    ObjectNode response = Json.object();
    ObjectNode candidate = response.putArray("candidates").addObject();
    ObjectNode content = candidate.putObject("content");
    content.putArray("parts").addObject().put("text", text);
    content.put("role", "model");
    candidate.put("finishReason", finishReason);
    candidate.put("index", 0);
    ObjectNode usage = response.putObject("usageMetadata");
    usage.put("promptTokenCount", prompt);
    usage.put("candidatesTokenCount", outputTokens);
    usage.put("totalTokenCount", prompt + outputTokens);
    ArrayNode details = usage.putArray("promptTokensDetails");
    promptTokens.forEach((modality, count) -> details.addObject().put("modality", modality.name()).put("tokenCount", count));
    response.put("modelVersion", modelId);
    response.put("responseId", Base64.getUrlEncoder().withoutPadding()
        .encodeToString(ByteBuffer.allocate(8).putLong(seed).array()));
    return response;
  }

  /**
   * What {@code models.countTokens} answers (Gemini API reference, "Counting tokens": {@code totalTokens} and
   * {@code promptTokensDetails}): the prompt tokens generateContent would report for the same contents, counted the
   * same way. The body is {@code {"contents": [...]}}, as the SDK sends it for the Developer API, or
   * {@code {"generateContentRequest": {...}}}.
   */
  static ObjectNode countTokens(JsonNode body) {
    if (body == null || !body.isObject()) {
      throw HttpError.badRequest("invalid", "Invalid JSON payload received. Expected an object.");
    }
    JsonNode request = body.has("generateContentRequest") ? body.get("generateContentRequest") : body;
    Map<Modality, Integer> tokens = validateAndCount(request);
    ObjectNode response = Json.object();
    response.put("totalTokens", tokens.values().stream().mapToInt(Integer::intValue).sum());
    ArrayNode details = response.putArray("promptTokensDetails");
    tokens.forEach((modality, count) -> details.addObject().put("modality", modality.name()).put("tokenCount", count));
    return response;
  }

  /** At most {@code bytes} UTF-8 bytes of {@code text}, cut on a character boundary. */
  private static String truncate(String text, int bytes) {
    StringBuilder kept = new StringBuilder();
    int used = 0;
    for (int i = 0; i < text.length(); ) {
      int codePoint = text.codePointAt(i);
      int size = new String(Character.toChars(codePoint)).getBytes(StandardCharsets.UTF_8).length;
      if (used + size > bytes) {
        break;
      }
      kept.appendCodePoint(codePoint);
      used += size;
      i += Character.charCount(codePoint);
    }
    return kept.toString();
  }

  private static String answer(JsonNode config, JsonNode request, long seed) {
    JsonNode schema = config.has("responseJsonSchema") ? config.get("responseJsonSchema") : config.get("responseSchema");
    String mimeType = config.path("responseMimeType").asText("text/plain");
    if (schema != null && schema.isObject()) {
      JsonNode value = SchemaFaker.fake(schema, seed);
      if (value.isObject()) {
        followCopyInstructions(request, schema, (ObjectNode) value);
      }
      if (mimeType.equals("text/x.enum") && value.isTextual()) {
        return value.asText();
      }
      return Json.text(value);
    }
    String summary = "stand-in answer " + HexFormat.of().toHexDigits(seed).substring(0, 8) + " to: " + promptPreview(request);
    if (mimeType.equals("application/json")) {
      ObjectNode json = Json.object();
      json.put("text", summary);
      return Json.text(json);
    }
    return summary;
  }

  /** "Set field to "value" exactly." in a text part of the prompt: the one kind of instruction the stand-in follows. */
  private static final java.util.regex.Pattern COPY = java.util.regex.Pattern.compile(
      "Set ([A-Za-z_][A-Za-z0-9_]*) to \"([^\"]*)\" exactly\\.");

  /**
   * As a model asked to copy a value into a property of its answer does: each "Set F to "V" exactly." sentence of the
   * prompt's text sets the answer's string property F (one the schema declares) to V. How a batch request's answer
   * names the document it was generated for, so a test can tell an answer filed under another document's key.
   */
  private static void followCopyInstructions(JsonNode request, JsonNode schema, ObjectNode answer) {
    JsonNode properties = schema.path("properties");
    for (JsonNode content : request.path("contents")) {
      for (JsonNode part : content.path("parts")) {
        java.util.regex.Matcher copy = COPY.matcher(part.path("text").asText(""));
        while (copy.find()) {
          if (properties.has(copy.group(1))) {
            answer.put(copy.group(1), copy.group(2));
          }
        }
      }
    }
  }

  private static String promptPreview(JsonNode request) {
    for (JsonNode content : request.path("contents")) {
      for (JsonNode part : content.path("parts")) {
        if (part.has("text")) {
          String text = part.get("text").asText().strip().replaceAll("\\s+", " ");
          return text.length() > 60 ? text.substring(0, 60) + "..." : text;
        }
      }
    }
    return "(no text)";
  }

  /** Validates the request (API error messages) and counts prompt tokens per modality. */
  static Map<Modality, Integer> validateAndCount(JsonNode request) {
    if (request == null || !request.isObject()) {
      throw HttpError.badRequest("invalid", "Invalid JSON payload received. Expected an object.");
    }
    JsonNode contents = request.get("contents");
    if (contents == null || !contents.isArray() || contents.isEmpty()) {
      throw HttpError.badRequest("invalid", "* GenerateContentRequest.contents: contents is not specified\n");
    }
    Map<Modality, Integer> tokens = new EnumMap<>(Modality.class);
    for (int c = 0; c < contents.size(); c++) {
      countContent(contents.get(c), "contents[" + c + "]", tokens);
    }
    JsonNode system = request.get("systemInstruction");
    if (system != null && !system.isNull()) {
      countContent(system, "system_instruction", tokens);
    }
    JsonNode config = request.get("generationConfig");
    if (config != null && !config.isNull() && !config.isObject()) {
      throw HttpError.badRequest("invalid", "Invalid value at 'generation_config': expected an object.");
    }
    return tokens;
  }

  private static void countContent(JsonNode content, String where, Map<Modality, Integer> tokens) {
    if (!content.isObject()) {
      throw HttpError.badRequest("invalid", "Invalid value at '" + where + "': expected a Content object.");
    }
    JsonNode role = content.get("role");
    if (role != null && !role.isNull() && !(role.isTextual() && (role.asText().isEmpty() || ROLES.contains(role.asText())))) {
      throw HttpError.badRequest("invalid", "Please use a valid role: user, model.");
    }
    JsonNode parts = content.get("parts");
    if (parts == null || !parts.isArray() || parts.isEmpty()) {
      throw HttpError.badRequest("invalid", "* GenerateContentRequest." + where + ".parts: contents.parts must not be empty.\n");
    }
    for (int p = 0; p < parts.size(); p++) {
      countPart(parts.get(p), where + ".parts[" + p + "]", tokens);
    }
  }

  private static void countPart(JsonNode part, String where, Map<Modality, Integer> tokens) {
    boolean any = false;
    if (part.isObject()) {
      for (String kind : PART_KINDS) {
        any |= part.has(kind);
      }
    }
    if (!any) {
      throw HttpError.badRequest("invalid", "* GenerateContentRequest." + where
          + ".data: required oneof field 'data' must have one initialized field\n");
    }
    if (part.has("text")) {
      if (!part.get("text").isTextual()) {
        throw HttpError.badRequest("invalid", "Invalid value at '" + where + ".text' (TYPE_STRING), " + part.get("text"));
      }
      add(tokens, Modality.TEXT, Math.max(1, ceilDiv(part.get("text").asText().getBytes(StandardCharsets.UTF_8).length, 4)));
    }
    if (part.has("inlineData")) {
      JsonNode inline = part.get("inlineData");
      String mimeType = inline.path("mimeType").asText("");
      if (mimeType.isEmpty()) {
        throw HttpError.badRequest("invalid", "* GenerateContentRequest." + where
            + ".inline_data.mime_type: mime_type is not specified\n");
      }
      byte[] data;
      try {
        data = decodeBase64(inline.path("data").asText(""));
      } catch (IllegalArgumentException e) {
        String shown = inline.path("data").asText("");
        throw HttpError.badRequest("invalid", "Invalid value at '" + where + ".inline_data.data' (TYPE_BYTES), "
            + "Base64 decoding failed for \"" + (shown.length() > 40 ? shown.substring(0, 40) + "..." : shown) + "\"");
      }
      countMedia(mimeType, data.length, tokens);
    }
    if (part.has("fileData")) {
      countMedia(part.get("fileData").path("mimeType").asText("application/octet-stream"), 0, tokens);
    }
  }

  /** Rough but stable: images 258 tokens, PDFs 258 per ~50 KB "page", audio/video by size, text by bytes/4. */
  private static void countMedia(String mimeType, int bytes, Map<Modality, Integer> tokens) {
    String type = mimeType.toLowerCase(Locale.ROOT);
    if (type.startsWith("image/")) {
      add(tokens, Modality.IMAGE, 258);
    } else if (type.equals("application/pdf")) {
      add(tokens, Modality.DOCUMENT, 258 * Math.max(1, ceilDiv(bytes, 50_000)));
    } else if (type.startsWith("audio/")) {
      add(tokens, Modality.AUDIO, Math.max(32, ceilDiv(bytes, 500)));
    } else if (type.startsWith("video/")) {
      add(tokens, Modality.VIDEO, Math.max(263, ceilDiv(bytes, 2_000)));
    } else {
      add(tokens, Modality.TEXT, Math.max(1, ceilDiv(bytes, 4)));
    }
  }

  private static byte[] decodeBase64(String data) {
    String clean = data.strip();
    return clean.indexOf('-') >= 0 || clean.indexOf('_') >= 0
        ? Base64.getUrlDecoder().decode(clean) : Base64.getMimeDecoder().decode(requireBase64(clean));
  }

  /** The MIME decoder skips junk silently; the API does not, so reject anything outside the alphabet. */
  private static String requireBase64(String data) {
    for (int i = 0; i < data.length(); i++) {
      char c = data.charAt(i);
      boolean ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/'
          || c == '=' || c == '\r' || c == '\n';
      if (!ok) {
        throw new IllegalArgumentException("not base64");
      }
    }
    return data;
  }

  private static void add(Map<Modality, Integer> tokens, Modality modality, int count) {
    tokens.merge(modality, count, Integer::sum);
  }

  private static int ceilDiv(int a, int b) {
    return (a + b - 1) / b;
  }

  /** A stable seed from what determines the answer: model, contents, system instruction, generation config. */
  private static long seed(String modelId, JsonNode request) {
    try {
      MessageDigest sha = MessageDigest.getInstance("SHA-256");
      sha.update(modelId.getBytes(StandardCharsets.UTF_8));
      sha.update(request.path("contents").toString().getBytes(StandardCharsets.UTF_8));
      sha.update(request.path("systemInstruction").toString().getBytes(StandardCharsets.UTF_8));
      sha.update(request.path("generationConfig").toString().getBytes(StandardCharsets.UTF_8));
      return ByteBuffer.wrap(sha.digest()).getLong();
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK has SHA-256", e);
    }
  }
}
