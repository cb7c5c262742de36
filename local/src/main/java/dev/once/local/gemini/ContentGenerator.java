package dev.once.local.gemini;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.once.wire.http.HttpError;
import dev.once.wire.http.Json;
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
import java.util.regex.Matcher;
import java.util.regex.Pattern;

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

  /**
   * How the stand-in's model behaves beyond the request: {@code strictSampling} refuses temperature, top_p and top_k
   * with a 400, as Google says later models will (Gemini 3 accepts and ignores them); {@code thinkingTokens}, when
   * above 0, is how many tokens every answer thinks, whatever its level (to make an answer think past its bound).
   */
  record Behaviour(boolean strictSampling, int thinkingTokens) {
    static final Behaviour GOOGLE = new Behaviour(false, 0);
  }

  /** Thinking tokens an answer uses at each level, before a little of the request's own (stable) variation. */
  private static final Map<String, Integer> THINKING = Map.of("MINIMAL", 0, "LOW", 192, "MEDIUM", 960, "HIGH", 3072);

  /**
   * Checks the request and answers it as {@code model} (the model that answers: its {@code modelVersion}); a malformed
   * request is an {@link HttpError} 400 as the API reports it. Thinking counts against {@code maxOutputTokens}: an
   * answer that thinks past it comes back MAX_TOKENS with its text cut, or none (googleapis/python-genai#2062).
   */
  static ObjectNode generate(ServedModels.Model model, JsonNode request, Behaviour behaviour) {
    JsonNode config = request.path("generationConfig");
    Map<Modality, Integer> promptTokens = validateAndCount(request, model.generation(), resolution(config));
    checkSampling(config, model, behaviour);
    long seed = seed(model.name(), request);
    int thoughts = thoughts(config, model, behaviour, seed);
    String text = answer(config, request, seed);
    int answerTokens = Math.max(1, ceilDiv(text.getBytes(StandardCharsets.UTF_8).length, 4));
    int prompt = promptTokens.values().stream().mapToInt(Integer::intValue).sum();
    String finishReason = "STOP";
    int maxOutput = config.path("maxOutputTokens").asInt(0);
    if (maxOutput > 0 && thoughts + answerTokens > maxOutput) {
      // As the API does: thinking first, then the answer stops at the bound, mid-JSON if need be, or never starts.
      thoughts = Math.min(thoughts, maxOutput);
      answerTokens = maxOutput - thoughts;
      text = truncate(text, answerTokens * 4);
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
    // Google leaves a count of zero out (a captured MAX_TOKENS answer of 3.5 Flash-Lite has neither).
    if (answerTokens > 0) {
      usage.put("candidatesTokenCount", answerTokens);
    }
    usage.put("totalTokenCount", prompt + answerTokens + thoughts);
    ArrayNode details = usage.putArray("promptTokensDetails");
    promptTokens
        .forEach((modality, count) -> details.addObject().put("modality", modality.name()).put("tokenCount", count));
    if (thoughts > 0) {
      usage.put("thoughtsTokenCount", thoughts);
    }
    usage.put("serviceTier", "standard");
    response.put("modelVersion", model.name());
    response.put("responseId", Base64.getUrlEncoder().withoutPadding()
        .encodeToString(ByteBuffer.allocate(8).putLong(seed).array()));
    return response;
  }

  /**
   * Sampling parameters on a Gemini 3 model: "deprecated and ignored" (the Gemini 3 guide), or refused with a 400 under
   * {@link Behaviour#strictSampling}, as Google says later models will (its words for that are not published: these
   * are the stand-in's).
   */
  private static void checkSampling(JsonNode config, ServedModels.Model model, Behaviour behaviour) {
    boolean sampling = config.has("temperature") || config.has("topP") || config.has("topK");
    if (sampling && behaviour.strictSampling() && model.generation() >= 3) {
      throw HttpError.badRequest("invalid", "Sampling parameters (temperature, top_p, top_k) are not supported for"
          + " models/" + model.name() + ".");
    }
  }

  /**
   * The tokens the answer thinks: by {@code thinkingConfig.thinkingLevel} (the model's default when none), which the
   * model must accept (3.7 and 3.8 Flash refuse minimal, as Google documents), plus up to a quarter more from the
   * request; none for a generation-2 model.
   */
  private static int thoughts(JsonNode config, ServedModels.Model model, Behaviour behaviour, long seed) {
    JsonNode thinking = config.path("thinkingConfig");
    if (thinking.has("thinkingLevel") && thinking.has("thinkingBudget")) {
      throw HttpError.badRequest("invalid", "Request contains an invalid argument.");
    }
    String level = thinking.path("thinkingLevel").asText(model.defaultThinkingLevel());
    if (level != null) {
      level = level.toUpperCase(Locale.ROOT);
      if (!model.thinkingLevels().isEmpty() && !model.thinkingLevels().contains(level)) {
        throw HttpError.badRequest("invalid",
            "'" + level.toLowerCase(Locale.ROOT) + "' is not a supported thinking level"
                + " for this model. Allowed values are: " + String.join(", ",
                    model.thinkingLevels().stream().map(l -> l.toLowerCase(Locale.ROOT)).toList())
                + ".");
      }
    }
    if (behaviour.thinkingTokens() > 0) {
      return behaviour.thinkingTokens();
    }
    if (model.generation() < 3 || level == null) {
      return 0;
    }
    int base = THINKING.getOrDefault(level, 0);
    return base == 0 ? 0 : base + (int) Math.floorMod(seed, base / 4 + 1);
  }

  /** {@code generationConfig.mediaResolution}: MEDIA_RESOLUTION_LOW, _MEDIUM, _HIGH, or unspecified (null). */
  private static String resolution(JsonNode config) {
    String value = config.path("mediaResolution").asText("");
    return value.isEmpty() || value.equals("MEDIA_RESOLUTION_UNSPECIFIED") ? null : value;
  }

  /**
   * What {@code models.countTokens} answers (Gemini API reference, "Counting tokens": {@code totalTokens} and
   * {@code promptTokensDetails}): the prompt tokens generateContent would report for the same contents, counted the
   * same way. The body is {@code {"contents": [...]}}, as the SDK sends it for the Developer API, or
   * {@code {"generateContentRequest": {...}}}.
   */
  static ObjectNode countTokens(ServedModels.Model model, JsonNode body) {
    if (body == null || !body.isObject()) {
      throw HttpError.badRequest("invalid", "Invalid JSON payload received. Expected an object.");
    }
    JsonNode request = body.has("generateContentRequest") ? body.get("generateContentRequest") : body;
    Map<Modality, Integer> tokens = validateAndCount(request, model.generation(),
        resolution(request.path("generationConfig")));
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
    for (int i = 0; i < text.length();) {
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
    JsonNode schema =
        config.has("responseJsonSchema") ? config.get("responseJsonSchema") : config.get("responseSchema");
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
    String summary =
        "stand-in answer " + HexFormat.of().toHexDigits(seed).substring(0, 8) + " to: " + promptPreview(request);
    if (mimeType.equals("application/json")) {
      ObjectNode json = Json.object();
      json.put("text", summary);
      return Json.text(json);
    }
    return summary;
  }

  /** "Set field to "value" exactly." in a text part of the prompt: the one kind of instruction the stand-in follows. */
  private static final Pattern COPY = Pattern.compile(
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
        Matcher copy = COPY.matcher(part.path("text").asText(""));
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

  /**
   * Validates the request (API error messages) and counts prompt tokens per modality, media as a model of
   * {@code generation} sees them at {@code resolution} (null: its default).
   */
  static Map<Modality, Integer> validateAndCount(JsonNode request, int generation, String resolution) {
    if (request == null || !request.isObject()) {
      throw HttpError.badRequest("invalid", "Invalid JSON payload received. Expected an object.");
    }
    JsonNode contents = request.get("contents");
    if (contents == null || !contents.isArray() || contents.isEmpty()) {
      throw HttpError.badRequest("invalid", "* GenerateContentRequest.contents: contents is not specified\n");
    }
    Map<Modality, Integer> tokens = new EnumMap<>(Modality.class);
    for (int c = 0; c < contents.size(); c++) {
      countContent(contents.get(c), "contents[" + c + "]", tokens, generation, resolution);
    }
    JsonNode system = request.get("systemInstruction");
    if (system != null && !system.isNull()) {
      countContent(system, "system_instruction", tokens, generation, resolution);
    }
    JsonNode config = request.get("generationConfig");
    if (config != null && !config.isNull() && !config.isObject()) {
      throw HttpError.badRequest("invalid", "Invalid value at 'generation_config': expected an object.");
    }
    return tokens;
  }

  private static void countContent(JsonNode content, String where, Map<Modality, Integer> tokens, int generation,
      String resolution) {
    if (!content.isObject()) {
      throw HttpError.badRequest("invalid", "Invalid value at '" + where + "': expected a Content object.");
    }
    JsonNode role = content.get("role");
    if (role != null && !role.isNull()
        && !(role.isTextual() && (role.asText().isEmpty() || ROLES.contains(role.asText())))) {
      throw HttpError.badRequest("invalid", "Please use a valid role: user, model.");
    }
    JsonNode parts = content.get("parts");
    if (parts == null || !parts.isArray() || parts.isEmpty()) {
      throw HttpError.badRequest("invalid",
          "* GenerateContentRequest." + where + ".parts: contents.parts must not be empty.\n");
    }
    for (int p = 0; p < parts.size(); p++) {
      countPart(parts.get(p), where + ".parts[" + p + "]", tokens, generation, resolution);
    }
  }

  private static void countPart(JsonNode part, String where, Map<Modality, Integer> tokens, int generation,
      String resolution) {
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
        throw HttpError.badRequest("invalid",
            "Invalid value at '" + where + ".text' (TYPE_STRING), " + part.get("text"));
      }
      add(tokens, Modality.TEXT,
          Math.max(1, ceilDiv(part.get("text").asText().getBytes(StandardCharsets.UTF_8).length, 4)));
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
      countMedia(mimeType, data, tokens, generation, resolution);
    }
    if (part.has("fileData")) {
      countMedia(part.get("fileData").path("mimeType").asText("application/octet-stream"), new byte[0], tokens,
          generation, resolution);
    }
  }

  /**
   * Images and PDF pages as Google counts them: Gemini 2 at 258 tokens an image or page; Gemini 3 by media resolution
   * (the Gemini 3 guide: a PDF page 280 low, 560 medium and by default, 1120 high; an image 280, 560, 1120, and 1120 by
   * default). A PDF's pages are its {@code /Type /Page} objects (one per 50 KB when they are hidden in compressed
   * object streams). Audio and video by size, text by bytes/4.
   */
  private static void countMedia(String mimeType, byte[] data, Map<Modality, Integer> tokens, int generation,
      String resolution) {
    String type = mimeType.toLowerCase(Locale.ROOT);
    int bytes = data.length;
    if (type.startsWith("image/")) {
      add(tokens, Modality.IMAGE, generation < 3 ? 258 : perImageOrPage(resolution, 1120));
    } else if (type.equals("application/pdf")) {
      add(tokens, Modality.DOCUMENT, (generation < 3 ? 258 : perImageOrPage(resolution, 560)) * pages(data));
    } else if (type.startsWith("audio/")) {
      add(tokens, Modality.AUDIO, Math.max(32, ceilDiv(bytes, 500)));
    } else if (type.startsWith("video/")) {
      add(tokens, Modality.VIDEO, Math.max(263, ceilDiv(bytes, 2_000)));
    } else {
      add(tokens, Modality.TEXT, Math.max(1, ceilDiv(bytes, 4)));
    }
  }

  private static int perImageOrPage(String resolution, int byDefault) {
    if (resolution == null) {
      return byDefault;
    }
    return switch (resolution) {
      case "MEDIA_RESOLUTION_LOW" -> 280;
      case "MEDIA_RESOLUTION_MEDIUM" -> 560;
      case "MEDIA_RESOLUTION_HIGH" -> 1120;
      default -> throw HttpError.badRequest("invalid", "Invalid value at 'generation_config.media_resolution'"
          + " (type.googleapis.com/google.ai.generativelanguage.v1.GenerationConfig.MediaResolution), \""
          + resolution + "\"");
    };
  }

  private static final Pattern PAGE = Pattern.compile("/Type\\s*/Page(?![s\\w])");

  /** The pages of a PDF: its page objects when they can be seen, else one per 50 KB; at least one. */
  static int pages(byte[] pdf) {
    Matcher page = PAGE.matcher(new String(pdf, StandardCharsets.ISO_8859_1));
    int count = 0;
    while (page.find()) {
      count++;
    }
    return Math.max(1, count > 0 ? count : ceilDiv(pdf.length, 50_000));
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
