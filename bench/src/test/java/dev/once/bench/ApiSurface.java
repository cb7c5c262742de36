package dev.once.bench;

import java.io.IOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.GenericArrayType;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.lang.reflect.TypeVariable;
import java.lang.reflect.WildcardType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

/**
 * Reads the signatures the library exports, from its compiled classes: of every public or protected member of every
 * accessible class in an exported package (not under {@code dev.once.internal}) — its supertypes, type parameters'
 * bounds, public and protected fields, and each method's and constructor's parameters, return type, thrown types and
 * type parameters, generic arguments included — and names each internal type one of them names.
 */
final class ApiSurface {
  static final String INTERNAL = "dev.once.internal";

  private ApiSurface() {}

  /**
   * Every leak of the classes of packages starting with {@code prefix} under the classes directory {@code root},
   * loaded by {@code loader}, in a stable order.
   */
  static List<String> leaks(Path root, ClassLoader loader, String prefix) throws IOException {
    List<String> found = new ArrayList<>();
    List<String> names;
    try (Stream<Path> files = Files.walk(root)) {
      names = files.filter(f -> f.toString().endsWith(".class")).map(f -> root.relativize(f).toString())
          .map(f -> f.substring(0, f.length() - ".class".length()).replace('/', '.').replace('\\', '.'))
          .filter(name -> name.startsWith(prefix) && !name.startsWith(INTERNAL + ".") && !name.endsWith("package-info"))
          .sorted().toList();
    }
    for (String name : names) {
      Class<?> type;
      try {
        type = Class.forName(name, false, loader);
      } catch (ClassNotFoundException | LinkageError e) {
        throw new IllegalStateException("cannot load " + name, e);
      }
      if (exported(type)) {
        leaksOf(type, found);
      }
    }
    return found;
  }

  /** A type outside the library can name: public (or protected, nested), and so is every class around it. */
  private static boolean exported(Class<?> type) {
    for (Class<?> c = type; c != null; c = c.getEnclosingClass()) {
      if (c.isAnonymousClass() || c.isLocalClass() || c.isSynthetic() || !visible(c.getModifiers())) {
        return false;
      }
    }
    return true;
  }

  private static boolean visible(int modifiers) {
    return Modifier.isPublic(modifiers) || Modifier.isProtected(modifiers);
  }

  private static void leaksOf(Class<?> type, List<String> found) {
    String owner = type.getName();
    check(owner + " extends", type.getGenericSuperclass(), found);
    for (Type implemented : type.getGenericInterfaces()) {
      check(owner + " implements", implemented, found);
    }
    for (TypeVariable<?> variable : type.getTypeParameters()) {
      check(owner + " type parameter " + variable.getName(), variable, found);
    }
    for (Field field : type.getDeclaredFields()) {
      if (visible(field.getModifiers()) && !field.isSynthetic()) {
        check(owner + "." + field.getName() + " field", field.getGenericType(), found);
      }
    }
    for (Constructor<?> constructor : type.getDeclaredConstructors()) {
      if (visible(constructor.getModifiers()) && !constructor.isSynthetic()) {
        String where = owner + "(" + params(constructor.getParameterTypes()) + ")";
        for (Type parameter : constructor.getGenericParameterTypes()) {
          check(where + " parameter", parameter, found);
        }
        for (Type thrown : constructor.getGenericExceptionTypes()) {
          check(where + " throws", thrown, found);
        }
      }
    }
    for (Method method : type.getDeclaredMethods()) {
      if (!visible(method.getModifiers()) || method.isSynthetic() || method.isBridge()) {
        continue;
      }
      String where = owner + "." + method.getName() + "(" + params(method.getParameterTypes()) + ")";
      check(where + " returns", method.getGenericReturnType(), found);
      for (Type parameter : method.getGenericParameterTypes()) {
        check(where + " parameter", parameter, found);
      }
      for (Type thrown : method.getGenericExceptionTypes()) {
        check(where + " throws", thrown, found);
      }
      for (TypeVariable<?> variable : method.getTypeParameters()) {
        check(where + " type parameter " + variable.getName(), variable, found);
      }
    }
  }

  private static String params(Class<?>[] types) {
    return String.join(", ", Stream.of(types).map(Class::getSimpleName).toList());
  }

  private static void check(String where, Type type, List<String> found) {
    Set<String> internal = new TreeSet<>();
    internals(type, internal, new HashSet<>());
    internal.forEach(name -> found.add(where + " names " + name));
  }

  /** The internal classes {@code type} names, its arguments, bounds and components included. */
  private static void internals(Type type, Set<String> internal, Set<TypeVariable<?>> seen) {
    switch (type) {
      case null -> {
        // no superclass
      }
      case Class<?> c -> {
        Class<?> named = c;
        while (named.isArray()) {
          named = named.getComponentType();
        }
        if (named.getName().startsWith(INTERNAL + ".")) {
          internal.add(named.getName());
        }
      }
      case ParameterizedType p -> {
        internals(p.getRawType(), internal, seen);
        internals(p.getOwnerType(), internal, seen);
        for (Type argument : p.getActualTypeArguments()) {
          internals(argument, internal, seen);
        }
      }
      case WildcardType w -> {
        for (Type bound : w.getUpperBounds()) {
          internals(bound, internal, seen);
        }
        for (Type bound : w.getLowerBounds()) {
          internals(bound, internal, seen);
        }
      }
      case GenericArrayType a -> internals(a.getGenericComponentType(), internal, seen);
      case TypeVariable<?> v -> {
        if (seen.add(v)) {
          for (Type bound : v.getBounds()) {
            internals(bound, internal, seen);
          }
        }
      }
      default -> throw new IllegalArgumentException("a type of an unknown kind: " + type);
    }
  }
}
