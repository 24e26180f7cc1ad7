"""The code examples of the README and of docs/ are the code the tests build: every fenced block
that follows a `<!-- snippet: <path> -->` line must appear, line for line, in that file of the
source tree. Paths are relative to the source dir; every markdown file given is checked, and at
least one of them must hold a marker.

    readme_snippets.py <markdown file>... <source dir>
"""
import re
import sys


def snippets(markdown):
    """Yields (line number, path, lines of the block) for each marked block."""
    lines = markdown.splitlines()
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


def check(markdown_path, source_dir):
    """Returns (markers found, failures) for one markdown file, printing each failure."""
    with open(markdown_path, encoding="utf-8") as f:
        markdown = f.read()
    failures = 0
    count = 0
    for line, path, block in snippets(markdown):
        count += 1
        if block is None:
            print(f"{markdown_path}:{line}: a snippet marker must be followed by a fenced block")
            failures += 1
            continue
        with open(f"{source_dir}/{path}", encoding="utf-8") as f:
            source = f.read().splitlines()
        if not contains(source, block):
            print(f"{markdown_path}:{line + 1}: this block is not in {path} as written")
            failures += 1
    return count, failures


def main():
    if len(sys.argv) < 3:
        print(__doc__.strip().splitlines()[-1].strip())
        return 2
    markdown_paths, source_dir = sys.argv[1:-1], sys.argv[-1]
    failures = 0
    count = 0
    for markdown_path in markdown_paths:
        file_count, file_failures = check(markdown_path, source_dir)
        count += file_count
        failures += file_failures
    if count == 0:
        print(f"{', '.join(markdown_paths)}: no snippet markers found")
        failures += 1
    print(f"{count} snippet(s) in {len(markdown_paths)} file(s), {failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
