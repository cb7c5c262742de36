package dev.once.testing;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.TestTemplate;
import org.junit.jupiter.api.extension.AfterTestExecutionCallback;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.Extension;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.jupiter.api.extension.TestTemplateInvocationContext;
import org.junit.jupiter.api.extension.TestTemplateInvocationContextProvider;

/**
 * Runs the test once per {@link Fault} (all of them unless {@link #value} names some), each with a fresh
 * {@link Faults} parameter, and after each run checks that every event the test delivered had its effect carried out
 * once ({@link Faults#verify()}). The crash and ambiguous-failure matrices this project runs its own functions
 * through, for yours.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@TestTemplate
@ExtendWith(FaultMatrix.Provider.class)
public @interface FaultMatrix {
  Fault[] value() default {Fault.REDELIVERED, Fault.CRASH_AFTER_EFFECT, Fault.ANSWER_LOST};

  /** The JUnit 5 extension behind the annotation. */
  final class Provider implements TestTemplateInvocationContextProvider {
    @Override
    public boolean supportsTestTemplate(ExtensionContext context) {
      return context.getRequiredTestMethod().isAnnotationPresent(FaultMatrix.class);
    }

    @Override
    public Stream<TestTemplateInvocationContext> provideTestTemplateInvocationContexts(ExtensionContext context) {
      Fault[] faults = context.getRequiredTestMethod().getAnnotation(FaultMatrix.class).value();
      return Arrays.stream(faults).map(Run::new);
    }
  }

  /** One fault's run: its name, its {@link Faults}, and the check after it. */
  final class Run implements TestTemplateInvocationContext, ParameterResolver, AfterTestExecutionCallback {
    private final Fault fault;
    private Faults faults;

    Run(Fault fault) {
      this.fault = fault;
    }

    @Override
    public String getDisplayName(int invocationIndex) {
      return fault.name();
    }

    @Override
    public List<Extension> getAdditionalExtensions() {
      return List.of(this);
    }

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
      return parameter.getParameter().getType() == Faults.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
      faults = Faults.of(fault);
      context.getStore(ExtensionContext.Namespace.create(FaultMatrix.class, fault))
          .put("faults", (ExtensionContext.Store.CloseableResource) faults::close);
      return faults;
    }

    @Override
    public void afterTestExecution(ExtensionContext context) {
      if (faults != null && context.getExecutionException().isEmpty()) {
        faults.verify();
      }
    }
  }
}
