"""WordNet for METEOR without NLTK's downloader: the lexnames file, installing from Debian
packages (fake apt-get and .deb files here; the real install in test_meteor_synonyms), the
errors when it cannot be installed, and METEOR's synonym stage with the real WordNet."""

from __future__ import annotations

import gzip
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from idiombench.scoring import wordnet
from idiombench.scoring.meteor import MeteorScorer

MANPAGE = (
    """.TH LEXNAMES 5WN "Dec 2006" "WordNet 3.0"
.SS Lexicographer Files
.TS
l l l.
\\fBFile Number\\fP\t\\fBName\\fP\t\\fBContents\\fP
_
"""
    + "".join(
        f"{i:02d}\t{name}{'  ' if name == 'noun.person' else ''}\tdescription of {name}  \n"
        for i, name in enumerate(wordnet.LEXNAMES)
    )
    + ".TE\n"
)


def test_lexnames_file_lists_the_45_lexicographer_files():
    lines = wordnet.lexnames_text().splitlines()
    assert len(lines) == 45
    assert lines[0] == "00\tadj.all\t3" and lines[3] == "03\tnoun.Tops\t1" and lines[44] == "44\tadj.ppl\t3"
    assert lines[29] == "29\tverb.body\t2" and lines[2] == "02\tadv.all\t4"
    # NLTK's reader: `index, lexname, _ = line.split(); assert int(index) == i`
    assert all(int(line.split()[0]) == i and len(line.split()) == 3 for i, line in enumerate(lines))


def test_lexnames_from_the_man_page():
    assert wordnet.lexnames_from_manpage(MANPAGE) == list(wordnet.LEXNAMES)


def make_deb(root: Path, package: str, files: dict[str, bytes]) -> Path:
    tree = root / f"{package}-tree"
    for relative, content in files.items():
        path = tree / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    (tree / "DEBIAN").mkdir(parents=True)
    (tree / "DEBIAN" / "control").write_text(
        f"Package: {package}\nVersion: 1:3.0-37\nArchitecture: all\nMaintainer: test <t@example.com>\n"
        "Description: fake\n",
        encoding="utf-8",
    )
    deb = root / f"{package}_1%3a3.0-37_all.deb"
    subprocess.run(["dpkg-deb", "--build", "--root-owner-group", str(tree), str(deb)], check=True, capture_output=True)
    return deb


def fake_apt_get(tmp: Path, debs: list[Path], exit_code: int = 0) -> Path:
    script = tmp / "apt-get"
    copies = "".join(f'cp "{deb}" .\n' for deb in debs)
    script.write_text(f'#!/bin/sh\n[ "$1" = download ] || exit 9\n{copies}exit {exit_code}\n', encoding="utf-8")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script


@pytest.fixture
def fake_debs(tmp_path: Path) -> list[Path]:
    if shutil.which("dpkg-deb") is None:
        pytest.skip("dpkg-deb is not available (Debian tools: `apt-get install dpkg`)")
    share = "usr/share/wordnet/"
    base = {share + name: f"{name} contents\n".encode() for name in wordnet.DATABASE_FILES if name != "index.sense"}
    base[share + "cntlist.rev"] = b"counts\n"
    base["usr/share/man/man5/lexnames.5WN.gz"] = gzip.compress(MANPAGE.encode())
    sense = {share + "index.sense": b"able%3:00:00:: 00001740 1 0\n"}
    return [make_deb(tmp_path, "wordnet-base", base), make_deb(tmp_path, "wordnet-sense-index", sense)]


def test_install_lays_out_nltk_corpora_wordnet(tmp_path: Path, fake_debs: list[Path]):
    target = tmp_path / "nltk_data"
    assert not wordnet.available(target)
    wordnet.install(target, apt_get=str(fake_apt_get(tmp_path, fake_debs)))
    directory = target / "corpora" / "wordnet"
    assert wordnet.available(target)
    assert (directory / "data.noun").read_text() == "data.noun contents\n"
    assert (directory / "index.sense").read_bytes().startswith(b"able%3")
    assert (directory / "lexnames").read_text() == wordnet.lexnames_text()
    assert (directory / "cntlist.rev").exists()
    record = (directory / wordnet.RECORD).read_text()
    assert "LEXNAMES equals the table of lexnames.5WN.gz (45 files)" in record
    assert not list(directory.parent.glob(".wordnet-*"))  # the scratch directory is gone
    # already there: nothing is downloaded again
    wordnet.install(target, apt_get=str(tmp_path / "no-such-apt-get"))


def test_install_replaces_only_a_wordnet_it_installed(tmp_path: Path, fake_debs: list[Path]):
    """A WordNet folder it did not write (no IDIOMBENCH_WORDNET.json) stays as it is; its own is
    replaced with --force."""
    target = tmp_path / "nltk_data"
    theirs = target / "corpora" / "wordnet"
    theirs.mkdir(parents=True)
    (theirs / "notes.txt").write_text("mine", encoding="utf-8")
    apt_get = str(fake_apt_get(tmp_path, fake_debs))
    with pytest.raises(wordnet.IdiombenchError, match="was not written by idiombench"):
        wordnet.install(target, apt_get=apt_get)
    assert [p.name for p in theirs.iterdir()] == ["notes.txt"]
    (theirs / "notes.txt").unlink()
    wordnet.install(target, apt_get=apt_get)  # empty: installed
    wordnet.install(target, apt_get=apt_get, force=True)  # its own: replaced
    assert wordnet.available(target)


def test_install_refuses_a_man_page_that_disagrees(tmp_path: Path):
    if shutil.which("dpkg-deb") is None:
        pytest.skip("dpkg-deb is not available (Debian tools: `apt-get install dpkg`)")
    share = "usr/share/wordnet/"
    files = {share + name: b"x\n" for name in wordnet.DATABASE_FILES}
    files["usr/share/man/man5/lexnames.5WN.gz"] = gzip.compress(MANPAGE.replace("noun.Tops", "noun.tops").encode())
    debs = [make_deb(tmp_path, "wordnet-base", files), make_deb(tmp_path, "wordnet-sense-index", {share + "x": b""})]
    with pytest.raises(wordnet.WordNetInstallError, match="differ from the project's list of 45"):
        wordnet.install(tmp_path / "nltk_data", apt_get=str(fake_apt_get(tmp_path, debs)))
    assert not wordnet.available(tmp_path / "nltk_data")


def test_install_explains_what_to_do_when_apt_get_fails(tmp_path: Path):
    with pytest.raises(wordnet.WordNetInstallError) as failed:
        wordnet.install(tmp_path / "nltk_data", apt_get=str(fake_apt_get(tmp_path, [], exit_code=100)))
    message = str(failed.value)
    assert "apt-get download wordnet-base wordnet-sense-index` failed (exit 100" in message
    assert "python -m nltk.downloader -d <dir> wordnet" in message and "IDIOMBENCH_NLTK_DATA" in message
    with pytest.raises(wordnet.WordNetInstallError, match="is not available on this machine"):
        wordnet.install(tmp_path / "nltk_data", apt_get=str(tmp_path / "missing-apt-get"))


def test_missing_wordnet_stops_meteor_with_instructions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv(wordnet.DATA_DIR_ENV, str(tmp_path / "empty"))
    assert wordnet.data_dir() == (tmp_path / "empty").resolve()
    with pytest.raises(wordnet.WordNetMissing, match="WordNet is not installed in .*missing: data.noun"):
        MeteorScorer()
    assert wordnet.main(["--check"]) == 1


def test_meteor_synonyms_come_from_wordnet(wordnet_root: Path):
    meteor = MeteorScorer()
    identical = 1 - 0.5 * (1 / 3) ** 3  # 3 of 3 words matched in one chunk
    assert meteor.score("a fast car", ["a fast car"]) == pytest.approx(identical)
    # "auto" matches "car" only through WordNet (car.n.01); "tree" does not
    assert meteor.score("a fast auto", ["a fast car"]) == pytest.approx(identical)
    without_synonym = 2 / 3 * (1 - 0.5 * (1 / 2) ** 3)  # 2 of 3 matched, one chunk of 2
    assert meteor.score("a fast tree", ["a fast car"]) == pytest.approx(without_synonym)
    # several references: the best one counts
    assert meteor.score("a fast auto", ["a slow tree", "a fast car"]) == pytest.approx(identical)
    assert meteor.score("", ["a fast car"]) == 0.0
