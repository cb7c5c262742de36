package dev.once.local.storage;

import java.util.Map;

/** What an upload asks to store, before the store gives it a generation. */
record NewObject(
    String name,
    String contentType,
    Map<String, String> metadata,
    String contentEncoding,
    String cacheControl,
    String contentDisposition,
    String expectedMd5,
    String expectedCrc32c,
    byte[] data) {}
