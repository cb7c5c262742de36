#!/usr/bin/env python3
# Usage: dev/migrate-refusal.py FILE.java... (a one-off for branches made before Refusal; delete once merged)
"""Migrates call sites from PermanentFailure / NotPerformed / Deferral to Refusal (issue 22)."""
import re, sys

KIND = {'PermanentFailure': 'PERMANENT', 'NotPerformed': 'NOT_PERFORMED', 'Deferral': 'DEFERRED'}
FACTORY = {'PermanentFailure': 'permanent', 'NotPerformed': 'notPerformed', 'Deferral': 'deferred'}
OLD = '(PermanentFailure|NotPerformed|Deferral)'

def close_paren(s, i):
    depth = 0
    while i < len(s):
        c = s[i]
        if c == '"':
            i += 1
            while s[i] != '"':
                i += 2 if s[i] == '\\' else 1
        elif c == '(':
            depth += 1
        elif c == ')':
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise ValueError('unbalanced')

def migrate(s):
    s = re.sub(r'new ' + OLD + r'\(', lambda m: 'Refusal.' + FACTORY[m.group(1)] + '(', s)
    s = re.sub(r'throws ' + OLD + r'(, ' + OLD + r')*', 'throws Refusal', s)
    s = re.sub(r'throws ([\w.]+), ' + OLD + r'\b', r'throws \1, Refusal', s)
    # assertThrows(X.class, ...) as a statement: the kind is asserted too.
    while True:
        m = re.search(r'(?m)^(\s*)assertThrows\(' + OLD + r'\.class,\s', s)
        if not m:
            break
        start = m.start() + len(m.group(1))
        end = close_paren(s, start + len('assertThrows'))
        inner = s[start + len('assertThrows('):end].replace(m.group(2) + '.class', 'Refusal.class', 1)
        s = s[:start] + 'assertEquals(Refusal.Kind.' + KIND[m.group(2)] + ', assertThrows(' + inner + ').kind())' + s[end + 1:]
    # X name = assertThrows(X.class, ...): typed as a Refusal; the kind is asserted on the next line.
    while True:
        m = re.search(r'(?m)^(\s*)' + OLD + r' (\w+) = assertThrows\(\2\.class,\s', s)
        if not m:
            break
        indent, old, name = m.group(1), m.group(2), m.group(3)
        call = m.start() + len(indent) + len(old) + 1 + len(name) + 3
        end = close_paren(s, call + len('assertThrows'))
        semi = s.index(';', end) + 1
        stmt = s[m.start() + len(indent):semi].replace(old + ' ' + name, 'Refusal ' + name, 1).replace(old + '.class', 'Refusal.class', 1)
        s = s[:m.start() + len(indent)] + stmt + '\n' + indent + 'assertEquals(Refusal.Kind.' + KIND[old] + ', ' + name + '.kind());' + s[semi:]
    # catch (X e) { ... }: caught as before, the other kinds passing through as they did.
    s = re.sub(r'catch \(' + OLD + r' (\w+)\) \{\n(\s*)', lambda m: 'catch (Refusal ' + m.group(2) + ') {\n' + m.group(3)
        + 'if (!' + m.group(2) + '.is(Refusal.Kind.' + KIND[m.group(1)] + ')) {\n' + m.group(3) + '  throw ' + m.group(2) + ';\n'
        + m.group(3) + '}\n' + m.group(3), s)
    s = re.sub(r'extends ' + OLD + r'\b', 'extends Refusal', s)
    s = re.sub(r'\{@link ' + OLD + r'\}', lambda m: '{@link Refusal#' + FACTORY[m.group(1)] + '}', s)
    # imports: one of Refusal in place of the old ones
    had = re.search(r'import dev\.once\.guard\.' + OLD + ';\n', s)
    s = re.sub(r'import dev\.once\.guard\.' + OLD + ';\n', '', s)
    if had and 'import dev.once.guard.Refusal;' not in s:
        s = s[:had.start()] + 'import dev.once.guard.Refusal;\n' + s[had.start():]
    s = s.replace('dev.once.guard.Refusal.', 'Refusal.') if 'import dev.once.guard.Refusal;' in s else s
    return '\n'.join(wrap(line) for line in s.split('\n'))

def wrap(line):
    """A migrated assertion longer than 120 characters continues after 'assertThrows(Refusal.class,'."""
    cut = 'assertThrows(Refusal.class, '
    if len(line) <= 120 or cut not in line:
        return line
    indent = len(line) - len(line.lstrip())
    at = line.index(cut) + len(cut) - 1
    return line[:at] + '\n' + ' ' * (indent + 4) + line[at + 1:]

for path in sys.argv[1:]:
    before = open(path).read()
    after = migrate(before)
    if after != before:
        open(path, 'w').write(after)
        print('migrated', path)
