"""A new user's first minutes, tried for real: a fresh virtual environment, the README's install
command as written, then `agui demo`; and a contributor's first hour: the README's Develop
commands are the ones CI runs, and a checkout without the external conformance corpus still
collects, its corpus tests failing with one line that says what is missing.

One environment serves the install tests (installing is the slow part). pip fetches the
dependencies from the package registry, so the install may take minutes; it is bounded, and so
is every command after it. Nothing here is skipped: a README whose install command stops working
fails this test.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
INSTALL_SECONDS = 900.0
RUN_SECONDS = 120.0

EXPECTED = [
    "[Run Started]",
    '[Tool Call: get_weather] {"location":"Paris"}',
    "[Tool Result: get_weather] ",
    '[Tool Call: search_restaurants] {"location":"Paris","cuisine":"italian"}',
    "[Tool Result: search_restaurants] ",
    "In Paris it is ",
    "[Run Finished]",
]
"""The lines `agui demo` prints, in order, by how each begins."""


def readme_install_command() -> list[str]:
    """The install command of the README's "Install" section, as a new user would copy it."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Install\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, flags=re.DOTALL)
    commands = [line for block in blocks for line in block.splitlines() if "pip install" in line]
    assert len(commands) == 1, f"expected one install command in the README, found {commands}"
    assert "from a checkout of this repository" in section.lower()
    return shlex.split(commands[0])


def clean_environment(bin_dir: Path) -> dict[str, str]:
    """The environment without this test run's virtual environment or model settings."""
    env = {
        name: value
        for name, value in os.environ.items()
        if not name.startswith(("AGUI_", "VIRTUAL_ENV", "PYTHON", "COV_", "COVERAGE"))
    }
    env["PATH"] = os.pathsep.join([str(bin_dir), env.get("PATH", "")])
    env["VIRTUAL_ENV"] = str(bin_dir.parent)
    return env


@pytest.fixture(scope="module")
def fresh_install(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A new virtual environment with the project installed by the README's command."""
    home = tmp_path_factory.mktemp("new-user")
    venv.create(home / "venv", with_pip=True, symlinks=sys.platform != "win32")
    bin_dir = home / "venv" / ("Scripts" if sys.platform == "win32" else "bin")
    env = clean_environment(bin_dir)
    command = readme_install_command()
    assert command[:2] == ["pip", "install"], command
    installed = subprocess.run(  # noqa: S603 - the README's own command, in a new environment
        [str(bin_dir / "python"), "-m", *command],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=INSTALL_SECONDS,
        check=False,
    )
    assert installed.returncode == 0, installed.stdout[-3000:] + installed.stderr[-3000:]
    return bin_dir, env


def test_the_readme_install_command_installs_the_agui_command(
    fresh_install: tuple[Path, dict[str, str]],
) -> None:
    bin_dir, env = fresh_install

    version = subprocess.run(  # noqa: S603 - the installed console script
        [str(bin_dir / "agui"), "--version"],
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_SECONDS,
        check=False,
    )

    assert version.returncode == 0, version.stderr
    assert version.stdout.startswith("agui ")
    site = subprocess.run(  # noqa: S603 - the new environment's interpreter
        [str(bin_dir / "python"), "-c", "import agui; print(agui.__file__)"],
        cwd=bin_dir,
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_SECONDS,
        check=False,
    )
    assert "site-packages" in site.stdout, "the checkout was not installed into the environment"


def test_agui_demo_shows_the_travel_run_and_exits_0(
    fresh_install: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    bin_dir, env = fresh_install

    demo = subprocess.run(  # noqa: S603 - the installed console script
        [str(bin_dir / "agui"), "demo"],
        cwd=tmp_path,  # anywhere: the installed package carries the example
        env=env,
        capture_output=True,
        text=True,
        encoding="utf-8",
        timeout=RUN_SECONDS,
        check=False,
    )

    assert demo.returncode == 0, demo.stderr
    lines = demo.stdout.splitlines()
    assert len(lines) == len(EXPECTED), demo.stdout
    for line, start in zip(lines, EXPECTED, strict=True):
        assert line.startswith(start), demo.stdout
    assert lines[5].endswith("Enjoy your trip!")
    assert "Traceback" not in demo.stderr


def test_agui_demo_raw_passes_agui_verify(
    fresh_install: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    bin_dir, env = fresh_install

    with subprocess.Popen(  # noqa: S603 - the installed console script
        [str(bin_dir / "agui"), "demo", "--raw"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
    ) as demo:
        assert demo.stdout is not None
        verify = subprocess.run(  # noqa: S603 - the installed console script
            [str(bin_dir / "agui"), "verify", "-"],
            stdin=demo.stdout,
            env=env,
            capture_output=True,
            text=True,
            timeout=RUN_SECONDS,
            check=False,
        )
        demo.stdout.close()
        assert demo.wait(timeout=RUN_SECONDS) == 0

    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert re.fullmatch(r"<stdin>: \d+ events in 1 run: valid \(JSON lines\)\n", verify.stdout)


# -- a contributor's first hour ------------------------------------------------------------------


def readme_develop_commands() -> list[str]:
    """The commands of the README's "Develop" section, one a line, as a contributor copies them."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("\n## Develop\n", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, flags=re.DOTALL)
    assert len(blocks) == 1, "expected one sh block in the README's Develop section"
    return [line.strip() for line in blocks[0].splitlines() if line.strip()]


def ci_commands() -> list[str]:
    """The project's own scripts that `.ci/run` runs, in order, before its floor run."""
    run = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    return [line.strip() for line in run.splitlines() if line.startswith("scripts/")]


def test_the_readme_develop_section_is_what_ci_runs() -> None:
    commands = readme_develop_commands()

    assert commands == ["scripts/setup-dev", "scripts/check", "scripts/llm-lane"]
    assert ci_commands() == commands
    for command in commands:
        script = ROOT / command
        assert script.is_file(), command
        assert os.access(script, os.X_OK), f"{command} is not executable"


def test_without_the_corpus_collection_succeeds_and_its_tests_fail_saying_so(
    tmp_path: Path,
) -> None:
    env = {
        name: value
        for name, value in os.environ.items()
        # pytest prints its summary lines whole under CI: the count below is of the failures'
        if not name.startswith(("COV_", "COVERAGE", "PYTEST_"))
        and name not in {"CI", "BUILD_NUMBER"}
    }
    env["AGUI_CONFORMANCE_DIR"] = str(tmp_path)  # an empty folder: no corpus in it

    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
            "-q",
            "-rf",
            "tests/test_conformance.py",
            "tests/test_sse.py",
            "-k",
            "corpus or null_omission or verdict",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=RUN_SECONDS,
        check=False,
    )

    out = run.stdout
    assert run.returncode == 1, out + run.stderr  # tests failed; a collection error gives 2
    assert "skipped" not in out, out
    summary = re.search(r"(\d+) failed", out)
    assert summary is not None, out
    assert int(summary.group(1)) == 7, out
    assert " passed" not in out, out
    line = (
        f"the AG-UI conformance corpus is missing: {tmp_path} has no spec-1.1/streams, "
        "spec-1.0-partial/streams, null-omission.json; it comes from the official ag-ui "
        "repository (ag-ui-protocol/ag-ui, its spec/1.1/conformance and sdks/fixtures): put a "
        "copy there, or point AGUI_CONFORMANCE_DIR at one\n"
    )
    assert out.count(line) == 7, out
    assert "Traceback" not in out
