"""The chat's file tools and change sets: a write, edit or delete is journaled so undo puts
it back, and with sandbox.writes = "review" it is held like a command's writes until applied.
Through the engine's service (what execute() calls), checked on the host."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import TYPE_CHECKING, Any

import pytest

from corral.service import Service

from .conftest import give_to_test_user, user_prefix
from .test_change_sets import held_ids, stage_root

if TYPE_CHECKING:
    from .conftest import Host

pytestmark = pytest.mark.sandbox


@pytest.fixture
def svc(host: Host, monkeypatch: pytest.MonkeyPatch) -> Service:
    if user_prefix():
        # This process is root: as "nobody" it would only be root on nobody's private home
        # (no overlay there for it), passing or not by what an earlier test left cached.
        pytest.skip("the engine in this process runs as root: the root pass covers it")
    for name in ("HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
        monkeypatch.setenv(name, host.env[name])  # corral's state: the fake home's
    service = Service()
    service.environ = dict(host.env)
    return service


def op(svc: Service, host: Host, tool: str, writes: str = "apply", **tool_input: Any) -> Any:
    request = {
        "layers": {
            "global": {
                "sandbox": {"writes": writes},
                "tools": {"delete": {"allow_sandboxed": True}},  # off by default when sandboxed
            }
        },
        "cwd": str(host.ws),
        "tool": tool,
        "input": tool_input,
    }
    return svc.call("op", request)


def test_tool_writes_edits_and_deletes_are_undone_newest_first(svc: Service, host: Host) -> None:
    readme = host.ws / "README.md"
    before = readme.read_text()
    assert op(svc, host, "write", path="new.txt", content="n\n")["change"]["status"] == "applied"
    edited = op(svc, host, "edit", path="README.md", old=before[:5], new="EDITED")
    assert edited["written"] and edited["change"]["counts"]["modified"] == 1
    assert svc.call("undo", {})["code"] == 0
    assert readme.read_text() == before
    assert (host.ws / "new.txt").exists()
    assert svc.call("undo", {})["code"] == 0
    assert not (host.ws / "new.txt").exists()
    assert host.git("status", "--porcelain") == ""


def test_a_tool_delete_is_undone(svc: Service, host: Host) -> None:
    (host.ws / "gone.txt").write_text("keep me\n")
    result = op(svc, host, "delete", path="gone.txt")
    assert result["ok"] is True, result
    assert not (host.ws / "gone.txt").exists()
    assert svc.call("undo", {})["code"] == 0
    assert (host.ws / "gone.txt").read_text() == "keep me\n"


def test_in_review_mode_tool_changes_are_held_until_applied(svc: Service, host: Host) -> None:
    readme = host.ws / "README.md"
    before = readme.read_text()
    (host.ws / "old.txt").write_text("old\n")
    wrote = op(svc, host, "write", "review", path="README.md", content="proposed\n")
    deleted = op(svc, host, "delete", "review", path="old.txt")
    assert wrote["ok"] and wrote["held"]["status"] == "held", wrote
    assert deleted["ok"] and deleted["held"]["status"] == "held", deleted
    assert readme.read_text() == before and (host.ws / "old.txt").exists()  # nothing yet
    listed = svc.call("changes", {})["out"]
    assert sum(": held" in line and line[0] != " " for line in listed) == 2, listed
    made = [line.split(", from ", 1)[1] for line in listed if ": held" in line and line[0] != " "]
    assert any(m.startswith(f"the file tool's write of {readme} at ") for m in made), listed
    assert any(m.startswith("the file tool's delete of ") for m in made), listed
    shown = svc.call("changes", {"id": wrote["held"]["id"]})["out"]
    assert "+proposed" in shown, shown
    for change in (wrote, deleted):
        done = svc.call("apply_changes", {"id": change["held"]["id"]})
        assert done["code"] == 0, done
    assert readme.read_text() == "proposed\n"
    assert not (host.ws / "old.txt").exists()


def test_where_an_envrc_cannot_be_read_ahead_a_tools_write_is_held(
    svc: Service, host: Host
) -> None:
    # Round 17: NODE_OPTIONS naming tools/trace.js through `$(...)`: the write landed, and
    # every host node at that prompt would load it. Now held, and the result says why.
    (host.ws / ".envrc").write_text('export NODE_OPTIONS="--require ./$(echo tools)/trace.js"\n')
    (host.ws / "tools").mkdir()
    wrote = op(svc, host, "write", path="tools/trace.js", content="planted()\n")
    assert wrote["ok"] and wrote["held"]["status"] == "held", wrote
    assert ".envrc" in wrote["held"]["why"], wrote
    assert not (host.ws / "tools" / "trace.js").exists()


def test_a_tools_new_module_is_held_for_review_not_refused(svc: Service, host: Host) -> None:
    """r48c U3: the write tool could not create a new top-level `utils.py` at all: refused
    at once ("the change-set rules refuse it"), nothing held, no id to apply. decide() lets
    it through to your window, and the write is held with its change set's id."""
    request = {"layers": {}, "cwd": str(host.ws), "tool": "write",
               "input": {"path": "utils.py", "content": "x = 1\n"}}  # fmt: skip
    decided = svc.call("guard", request)
    assert decided["decision"] != "deny" and decided.get("refusal") is None, decided
    wrote = op(svc, host, "write", path="utils.py", content="x = 1\n")
    assert wrote["ok"] and wrote["held"]["status"] == "held", wrote
    assert "new module name" in wrote["held"]["why"], wrote
    # (held paths as a command's are told, r51c CONTRACT: here a list of strings)
    assert wrote["held"]["held"] == [
        {"path": str(host.ws / "utils.py"), "code": "new-module", "why": wrote["held"]["why"]}
    ]
    assert not (host.ws / "utils.py").exists()
    assert (
        svc.call(
            "apply_changes", {"id": wrote["held"]["id"], "paths": [str(host.ws / "utils.py")]}
        )["code"]
        == 0
    )
    assert (host.ws / "utils.py").read_text() == "x = 1\n"


@pytest.mark.parametrize(
    "path",
    ["docs/.git/HEAD", "docs/.git/config", "sub/dir/.nvim.lua", "notes/talk.chat", "src/HEAD"],
)
def test_a_tool_cannot_write_what_a_command_could_not(svc: Service, host: Host, path: str) -> None:
    # Final review, A1: the file tools skipped the change-set check; `docs/.git/config` with
    # core.fsmonitor, written by the write tool, ran at the user's next `git status` there.
    (host.ws / "src").mkdir(exist_ok=True)
    for name in ("objects", "refs"):
        (host.ws / "src" / name).mkdir(exist_ok=True)  # src/HEAD would make src a repository
    result = op(svc, host, "write", path=path, content="[core]\n", create_dirs=True)
    assert result["ok"] is False, result
    assert result["refusal"]["code"] in ("protected", "new-repository", "chat-file"), result
    assert not (host.ws / path).exists()


def test_a_tool_write_leaves_the_directories_on_the_way_as_they_were(
    svc: Service, host: Host
) -> None:
    # Final review C2: every tool write made the directories above it 0755.
    private = host.ws / "private" / "deeper"
    private.mkdir(parents=True)
    (host.ws / "private").chmod(0o700)
    private.chmod(0o750)
    assert op(svc, host, "write", path="private/deeper/x.txt", content="x\n")["ok"] is True
    assert (host.ws / "private").stat().st_mode & 0o777 == 0o700
    assert private.stat().st_mode & 0o777 == 0o750


def test_with_direct_writes_a_tool_writes_through_its_opened_directory(
    svc: Service, host: Host
) -> None:
    # Final review C1: applied by path, a tool's write could be redirected by a sandboxed
    # command swapping a directory for a link at the same moment; with direct writes (where
    # commands write the workspace while they run) the tools keep their descriptor-based write.
    result = op(svc, host, "write", "direct", path="d.txt", content="x\n")
    assert result["ok"] is True and "change" not in result, result
    assert (host.ws / "d.txt").read_text() == "x\n"


TOOL_WRITE = """
import json, sys
from corral.service import Service
request = {"layers": {"global": {}}, "cwd": sys.argv[1], "tool": "write",
           "input": {"path": "ro/new.txt", "content": "x\\n"}}
print(json.dumps(Service().call("op", request)))
"""


def test_a_tool_write_that_fails_leaves_no_staging_area(host: Host) -> None:
    """L2: a file tool's write into a directory its user cannot write (0555) failed after
    the staging area was made, and left it: an hour later it was listed as a held change
    set "the command did not finish", which no command made."""
    (host.ws / "ro").mkdir()
    give_to_test_user(host.base)
    (host.ws / "ro").chmod(0o555)
    done = subprocess.run(
        [*user_prefix(), sys.executable, "-c", TOOL_WRITE, str(host.ws)],
        env=host.env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    result = json.loads(done.stdout)
    # root writes anyway; a user is refused, as on the host
    assert result["ok"] == (not user_prefix()), result
    left = list(stage_root(host).iterdir()) if stage_root(host).exists() else []
    assert [p.name for p in left if p.is_dir()] == [], left


DECIDE_WRITE = """
import json, sys
from corral.service import Service
request = {"layers": {"global": {"tools": {"approval": "auto"}}}, "cwd": sys.argv[1],
           "tool": "write", "input": {"path": sys.argv[2], "content": "x\\n"}, "dry_run": True}
print(json.dumps(Service().call("guard", request)))
"""


def test_decide_refuses_a_write_that_cannot_even_be_staged(host: Host) -> None:
    """r19b L1: as a user, a write into a directory they cannot write (0555) failed to be
    staged for decide()'s check, and decide() approved what execute() then refused."""
    (host.ws / "ro").mkdir()
    give_to_test_user(host.base)
    (host.ws / "ro").chmod(0o555)
    done = subprocess.run(
        [*user_prefix(), sys.executable, "-c", DECIDE_WRITE, str(host.ws), "ro/notes.txt"],
        env=host.env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    decided = json.loads(done.stdout)
    # root may write there; a user may not, and is told so before being asked
    assert (decided["decision"] == "deny") == bool(user_prefix()), decided


def test_an_edit_is_judged_as_it_leaves_the_file(svc: Service, host: Host) -> None:
    """r51c EDITPYPROJECT: before asking, an edit was judged as if it emptied the file, so
    every edit of pyproject.toml (a version bump) was refused as "a change to host tools'
    settings", and so was one whose old text is not there (not "found 0 occurrences")."""
    pyproject = host.ws / "pyproject.toml"
    pyproject.write_text('[project]\nname = "x"\nversion = "0.1"\n\n[tool.mypy]\nstrict = true\n')
    request: dict[str, Any] = {"layers": {}, "cwd": str(host.ws), "tool": "edit"}
    bump = {"path": "pyproject.toml", "old": 'version = "0.1"', "new": 'version = "0.2"'}
    decided = svc.call("guard", {**request, "input": bump})
    assert decided["decision"] != "deny" and decided.get("refusal") is None, decided
    assert op(svc, host, "edit", **bump)["change"]["status"] == "applied"
    assert 'version = "0.2"' in pyproject.read_text()
    missing = {**bump, "old": "no such text"}
    decided = svc.call("guard", {**request, "input": missing})
    assert decided["refusal"]["code"] == "match-count", decided
    plugin = {"path": "pyproject.toml", "old": "strict = true", "new": 'plugins = ["p"]'}
    decided = svc.call("guard", {**request, "input": plugin})
    assert decided["decision"] == "deny" and "host tools' settings" in decided["reason"]
    assert "plugins" not in pyproject.read_text()


def test_a_tools_refused_write_does_not_say_to_apply_it(svc: Service, host: Host) -> None:
    """r74c REFUSEAPPLYWORDS: a write of a new dot-config directory was refused with "apply
    it if you meant it", though no change set is kept to apply, beside the hint that only
    the user can make the change."""
    request = {
        "layers": {}, "cwd": str(host.ws), "tool": "write",
        "input": {"path": "newv/.vscode/settings.json", "content": "{}"},
    }  # fmt: skip
    refusal = svc.call("guard", request)["refusal"]  # (refused before asking: no set is kept)
    assert "apply" not in refusal["message"], refusal
    assert refusal["hint"].startswith("only the user"), refusal
    assert held_ids(host) == []


def test_a_write_into_what_git_ignores_is_held_and_said_without_nested_parentheses(
    svc: Service, host: Host
) -> None:
    """r90t WRITETOOLIGNORED: the write tool was refused outright ("only the user can make
    this change") where a command's write of the same file is held for the user to apply:
    held the same way now. r89 IGNOREDMSGPARENS: three "(" before two ")" in its words."""
    from corral.results import shape

    (host.ws / "build").mkdir()  # (below a new one, refused: the next test)

    request = {
        "layers": {}, "cwd": str(host.ws), "tool": "write",
        "input": {"path": "build/out.txt", "content": "x\n"},
    }  # fmt: skip
    decided = svc.call("guard", request)
    assert decided["decision"] == "require_approval" and "refusal" not in decided, decided
    done = svc.call("op", request)
    assert done.get("held") and not (host.ws / "build" / "out.txt").exists(), done
    assert len(held_ids(host)) == 1
    summary = shape("write", done, {"decision": "approve", "source": "user"}, True)["summary"]
    depth = 0
    for c in summary:
        depth += {"(": 1, ")": -1}.get(c, 0)
        assert 0 <= depth <= 1, summary
    assert depth == 0 and "held for the user's review" in summary, summary


def test_a_write_below_a_new_ignored_directory_is_refused_for_what_it_is(
    svc: Service, host: Host
) -> None:
    """r91a IGNOREDMASKSREFUSAL: with build/ (ignored) missing, a tool's write of
    build/.envrc was held as "in what git ignores", its real reason masked by the new
    directory's, for the user to apply as if it were build output. Refused, as where build/
    exists."""
    request = {
        "layers": {}, "cwd": str(host.ws), "tool": "write",
        "input": {"path": "build/.envrc", "content": "touch /tmp/x\n"},
    }  # fmt: skip
    decided = svc.call("guard", request)
    assert decided["decision"] == "deny", decided
    assert not (host.ws / "build").exists() and held_ids(host) == []
