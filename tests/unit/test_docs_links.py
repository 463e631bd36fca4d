"""The README and docs/ are the manual a user follows, so what they point at must be there:

- every relative link and image resolves: the file exists in the checkout (not git-ignored,
  so a clone has it), and an anchor (`page.md#heading`) is a heading of the target as GitHub
  slugs it;
- every fenced block names its language, and every command of a shell block exists: a shell
  builtin, a program on PATH or in the project's .venv, a file of the repository, or a tool the
  user installs (ALLOWED, each with its reason); `make` names Make targets, `bash`/`python` name
  files of the repository, `idiombench` names one of its commands;
- the README stays a front door (at most 200 lines, a command in its first 40), and .ci/run
  runs exactly the README's test command.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PAGES = [README, ROOT / "CHANGELOG.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELL = {"bash", "sh", "shell", "console"}
# Words a shell runs itself, and words that run the next word (the next word is checked).
BUILTINS = {"cd", "export", "source", ".", "set", "unset", "echo", "true", "false"}
WRAPPERS = {"time", "sudo", "exec", "nohup"}
# Tools a command block may use that the test machine need not have: the user installs them
# where the page says (keep this short; every entry must be used by some block).
ALLOWED: dict[str, str] = {}
# Environments that a Make target builds beside .venv: a command run from one of them is
# checked as the same command of .venv, and the target must exist.
OTHER_VENVS = {".venv-vllm/bin/": "vllm-env"}
SEPARATORS = {"&&", "||", ";", "|", "&"}
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)")
LINK = re.compile(r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
HTML_LINK = re.compile(r"""<(?:img|a)\b[^>]*?\b(?:src|href)=["']([^"']+)["']""", re.IGNORECASE)
REFERENCE = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
HTML_ANCHOR = re.compile(r"""<a\s+(?:id|name)=["']([^"']+)["']""", re.IGNORECASE)
INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")


@dataclass(frozen=True)
class Block:
    page: Path
    line: int  # of the opening fence, 1-based
    language: str
    lines: tuple[str, ...]


def split_page(path: Path) -> tuple[list[tuple[int, str]], list[Block]]:
    """The page's prose lines (number, text) and its fenced blocks."""
    prose: list[tuple[int, str]] = []
    blocks: list[Block] = []
    fence, language, start, body = "", "", 0, []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        match = FENCE.match(line)
        if not fence:
            if match:
                fence, language, start, body = match.group(1), match.group(2).lower(), number, []
            else:
                prose.append((number, line))
        elif match and match.group(1).startswith(fence) and not match.group(2):  # the same or a longer fence
            blocks.append(Block(path, start, language, tuple(body)))
            fence = ""
        else:
            body.append(line)
    assert not fence, f"{path.relative_to(ROOT)}:{start}: a fenced block is never closed"
    return prose, blocks


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: its text as rendered (links and code as their text),
    lower case, punctuation other than - and _ removed, each space a -."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    text = re.sub(r"<[^>]+>", "", text)
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every anchor of a page; a repeated heading's later anchors get -1, -2, ... as on GitHub."""
    prose, _ = split_page(path)
    found: set[str] = set()
    seen: dict[str, int] = {}
    for _, line in prose:
        found.update(HTML_ANCHOR.findall(line))
        if match := HEADING.match(line):
            base = slug(match.group(2))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
    return found


def links(path: Path) -> list[tuple[int, str]]:
    prose, _ = split_page(path)
    found = []
    for number, line in prose:
        text = INLINE_CODE.sub("", line)
        for pattern in (LINK, HTML_LINK, REFERENCE):
            found += [(number, target) for target in pattern.findall(text)]
    return found


def git_ignored(paths: list[Path]) -> set[Path]:
    if not paths:
        return set()
    listed = "\n".join(str(p.relative_to(ROOT)) for p in paths)
    result = subprocess.run(
        ["git", "check-ignore", "--no-index", "--stdin"],
        cwd=ROOT,
        input=listed,
        capture_output=True,
        text=True,
        check=False,
    )
    return {ROOT / name for name in result.stdout.splitlines()}


def test_the_slug_is_githubs() -> None:
    assert slug("1.2 Recovery") == "12-recovery"
    assert slug("`dvc repro -s` on params you did not write") == "dvc-repro--s-on-params-you-did-not-write"
    assert slug("element #1 has length 1") == "element-1-has-length-1"
    assert slug("A [linked](x.md) heading") == "a-linked-heading"


def test_every_relative_link_and_image_resolves() -> None:
    problems: list[str] = []
    targets: dict[Path, list[str]] = {}
    for page in PAGES:
        for number, target in links(page):
            where = f"{page.relative_to(ROOT)}:{number}: {target}"
            if re.match(r"^[a-z][a-z0-9+.-]*:|^//", target, re.IGNORECASE):
                continue  # a URL: not checked offline
            path_part, _, anchor = target.partition("#")
            # normpath, not resolve: a symbolic link into .venv stays a path of the checkout
            resolved = Path(os.path.normpath(page.parent / path_part)) if path_part else page
            if ROOT not in resolved.parents and resolved != ROOT:
                problems.append(f"{where}: points outside the repository")
            elif not resolved.exists():
                problems.append(f"{where}: no such file")
            else:
                targets.setdefault(resolved, []).append(where)
                if anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
                    problems.append(f"{where}: #{anchor} is not a heading of {resolved.relative_to(ROOT)}")
                elif anchor and resolved.suffix != ".md":
                    problems.append(f"{where}: an anchor into a file that is not Markdown")
    for path in git_ignored(list(targets)):
        problems += [f"{where}: git-ignored, so a clone does not have it" for where in targets[path]]
    assert not problems, "\n".join(problems)
    assert ROOT / "docs" / "images" / "mlflow-items.png" in targets  # the check saw the README's pictures


def shell_blocks() -> list[Block]:
    return [block for page in PAGES for block in split_page(page)[1] if block.language in SHELL]


def commands(block: Block) -> list[tuple[int, list[str]]]:
    """(line, words) of each simple command of a shell block: continuation lines joined,
    comments and `$ ` prompts dropped, split at && || ; | &."""
    found: list[tuple[int, list[str]]] = []
    logical, first = "", 0
    for offset, line in enumerate(block.lines, start=1):
        if not logical:
            first = block.line + offset
            line = re.sub(r"^\s*\$ ", "", line)
        if line.rstrip().endswith("\\"):
            logical += line.rstrip()[:-1] + " "
            continue
        logical += line
        lexer = shlex.shlex(logical, posix=True, punctuation_chars=";&|")
        lexer.whitespace_split, lexer.commenters = True, "#"
        try:
            tokens = [*lexer, ";"]
        except ValueError as error:  # an unclosed quote: the shell would not run it either
            raise AssertionError(f"{block.page.relative_to(ROOT)}:{first}: {error}: {logical}") from None
        words: list[str] = []
        for token in tokens:
            if token in SEPARATORS:
                if words:
                    found.append((first, words))
                words = []
            else:
                words.append(token)
        logical = ""
    return found


def make_targets() -> set[str]:
    targets: set[str] = set()
    for makefile in [ROOT / "Makefile", *sorted((ROOT / "make").glob("*.mk"))]:
        for line in makefile.read_text(encoding="utf-8").splitlines():
            if match := re.match(r"^([A-Za-z0-9_.\- ]+):(?!=)", line):
                targets.update(name for name in match.group(1).split() if not name.startswith("."))
    return targets


def idiombench_commands() -> set[str]:
    from idiombench import cli

    commands = [c for c in cli.app.registered_commands if c.callback]
    named = {c.name or c.callback.__name__.replace("_", "-") for c in commands if c.callback}
    return named | {g.name for g in cli.app.registered_groups if g.name}


def search_path() -> str:
    venvs = [Path(sys.executable).parent, ROOT / ".venv" / "bin"]
    return os.pathsep.join([*(str(v) for v in venvs), os.environ.get("PATH", "")])


def first_word(words: list[str]) -> tuple[str, list[str]]:
    while words and (ASSIGNMENT.match(words[0]) or words[0] in WRAPPERS):
        words = words[1:]
    return (words[0], words[1:]) if words else ("", [])


def check_command(words: list[str], targets: set[str], subcommands: set[str], used: set[str]) -> str | None:
    """What is wrong with one command, or None."""
    word, rest = first_word(words)
    if not word or word in BUILTINS:
        return None
    if word in ALLOWED:
        used.add(word)
        return None
    for prefix, target in OTHER_VENVS.items():
        if word.startswith(prefix):
            if target not in targets:
                return f"{word}: built by `make {target}`, which is no Make target"
            word = ".venv/bin/" + word[len(prefix) :]
    if "/" in word:
        if not (ROOT / word).exists() and not shutil.which(word):
            return f"{word}: no such file"
    elif not shutil.which(word, path=search_path()):
        return f"{word}: not on PATH, not in .venv/bin and not in ALLOWED"
    name = Path(word).name
    arguments = [w for w in rest if not w.startswith("-") and not ASSIGNMENT.match(w)]
    if name == "make":
        missing = [a for a in arguments if a not in targets]
        return f"make {' '.join(missing)}: no such Make target" if missing else None
    if name in {"bash", "sh", "python", "python3"} and "-m" not in rest and "-c" not in rest and arguments:
        script = arguments[0]
        return None if (ROOT / script).is_file() else f"{name} {script}: no such file in the repository"
    if name == "idiombench":
        command = arguments[0] if arguments else ""
        return None if command in subcommands else f"idiombench {command}: no such command"
    return None


def test_every_fenced_block_names_its_language() -> None:
    """A block without a language could hold commands that escape the check below."""
    blocks = [block for page in PAGES for block in split_page(page)[1]]
    unnamed = [f"{b.page.relative_to(ROOT)}:{b.line}" for b in blocks if not b.language]
    assert not unnamed, "blocks without a language (```bash, ```text, ```yaml ...):\n" + "\n".join(unnamed)


def test_every_command_of_a_shell_block_exists() -> None:
    targets, subcommands, used = make_targets(), idiombench_commands(), set()
    problems, checked = [], 0
    for block in shell_blocks():
        for line, words in commands(block):
            checked += 1
            if problem := check_command(words, targets, subcommands, used):
                problems.append(f"{block.page.relative_to(ROOT)}:{line}: {problem}")
    assert not problems, "\n".join(problems)
    assert checked >= 50  # the README's and the pages' blocks were read
    assert used == set(ALLOWED), f"ALLOWED entries no block uses: {sorted(set(ALLOWED) - used)}"


@pytest.mark.parametrize(
    "words, problem",
    [
        (["make", "no-such-target"], "no such Make target"),
        (["FOO=1", "time", "no-such-tool-xyz", "--flag"], "not on PATH"),
        (["bash", "requirements/no-such.sh"], "no such file in the repository"),
        (["idiombench", "--debug", "no-such-command"], "no such command"),
        ([".venv-vllm/bin/no-such-tool"], "no such file"),
    ],
)
def test_the_command_check_catches(words: list[str], problem: str) -> None:
    found = check_command(words, make_targets(), {"report"}, set())
    assert found is not None and problem in found


def test_commands_are_split_as_the_shell_splits_them() -> None:
    block = Block(
        README,
        0,
        "bash",
        (
            "$ FOO=1 make run   # a comment with a quote's apostrophe",
            "git clone a ../b && cd ../b \\",
            "    && dvc pull; dvc status | cat",
            "dvc exp show --keep 'a|b#c'",
        ),
    )
    assert [words for _, words in commands(block)] == [
        ["FOO=1", "make", "run"],
        ["git", "clone", "a", "../b"],
        ["cd", "../b"],
        ["dvc", "pull"],
        ["dvc", "status"],
        ["cat"],
        ["dvc", "exp", "show", "--keep", "a|b#c"],
    ]


def test_the_readme_is_a_front_door() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines: move the detail to a docs/ page"
    first = min(b.line for b in split_page(README)[1] if b.language in SHELL)
    assert first <= 40, f"README.md's first command block starts at line {first}"


def test_ci_runs_exactly_the_readmes_test_command() -> None:
    """.ci/run ends with the command the README gives for the tests, so CI tests what a user runs."""
    script = [line.strip() for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    last = [line for line in script if line and not line.startswith("#")][-1]
    readme_block = next(b for b in split_page(README)[1] if b.language in SHELL)
    assert last.split() in [words for _, words in commands(readme_block)], (last, readme_block.lines)
