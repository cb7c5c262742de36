package dev.once.functions;

import com.google.cloud.functions.CloudEventsFunction;
import io.cloudevents.CloudEvent;

/** Entry point (skeleton; the flow lands with the functions issue). */
public final class DocumentUploaded implements CloudEventsFunction {
  @Override
  public void accept(CloudEvent event) {
    throw new UnsupportedOperationException("DocumentUploaded is not implemented yet");
  }
}
