package dev.once.run.demo;

import dev.once.key.IdempotencyKey;

/** One uploaded sample: its object name and the key the pipeline gives it ({@code gcs:bucket/name#generation}). */
record Upload(Samples.Sample sample, String name, IdempotencyKey key) {}
