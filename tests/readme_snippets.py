"""The README's code examples are the code the tests build: every fenced block that follows a
`<!-- snippet: <path> -->` line must appear, line for line, in that file of the source tree.

    readme_snippets.py <README.md> <source dir>
"""
import re
import sys


def snippets(readme):
    """Yields (README line number, path, lines of the block) for each marked block."""
    lines = readme.splitlines()
    i = 0
    while i < len(lines):
        m = re.fullmatch(r"<!-- snippet: (\S+) -->", lines[i].strip())
        i += 1
        if not m:
            continue
        if i >= len(lines) or not lines[i].startswith("```"):
            yield i, m.group(1), None
            continue
        start = i + 1
        end = start
        while end < len(lines) and not lines[end].startswith("```"):
            end += 1
        yield start, m.group(1), lines[start:end]
        i = end + 1


def contains(haystack, needle):
    return any(haystack[k:k + len(needle)] == needle for k in range(len(haystack) - len(needle) + 1))


def main():
    readme_path, source_dir = sys.argv[1], sys.argv[2]
    with open(readme_path, encoding="utf-8") as f:
        readme = f.read()
    failures = 0
    count = 0
    for line, path, block in snippets(readme):
        count += 1
        if block is None:
            print(f"{readme_path}:{line}: a snippet marker must be followed by a fenced block")
            failures += 1
            continue
        with open(f"{source_dir}/{path}", encoding="utf-8") as f:
            source = f.read().splitlines()
        if not contains(source, block):
            print(f"{readme_path}:{line + 1}: this block is not in {path} as written")
            failures += 1
    if count == 0:
        print(f"{readme_path}: no snippet markers found")
        failures += 1
    print(f"{count} snippet(s), {failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
