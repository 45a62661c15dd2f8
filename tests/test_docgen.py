"""The generated reference pages (environment catalogue, configuration) and the CLI behind them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from verirl import docgen
from verirl.cli import main
from verirl.envs import ENVIRONMENTS, env_names, families

DOCS = Path(__file__).resolve().parents[1] / "docs"


def test_committed_pages_are_current() -> None:
    """Fails when the registry or the config changed and the pages were not regenerated."""
    stale = docgen.stale_pages(DOCS, write=False)
    assert not stale, (
        f"stale generated docs: {', '.join(stale)}; regenerate them with "
        f"`PYTHONPATH=src python -m verirl.docgen` from the repository root"
    )


def test_stale_page_is_reported_and_rewritten(tmp_path: Path) -> None:
    for file in ("environments.md", "configuration.md"):
        text = (DOCS / file).read_text(encoding="utf-8")
        # drop one generated row: the page is now stale
        lines = text.splitlines(keepends=True)
        row = next(
            i for i, line in enumerate(lines) if line.startswith("| `") or "| boxed |" in line
        )
        (tmp_path / file).write_text("".join(lines[:row] + lines[row + 1 :]), encoding="utf-8")
    assert docgen.main(["--check", "--docs", str(tmp_path)]) == 1
    assert docgen.main(["--docs", str(tmp_path)]) == 0
    assert docgen.stale_pages(tmp_path) == []
    for file in ("environments.md", "configuration.md"):
        assert (tmp_path / file).read_text(encoding="utf-8") == (DOCS / file).read_text("utf-8")


def test_splice_needs_both_markers() -> None:
    with pytest.raises(ValueError, match="BEGIN GENERATED: environments"):
        docgen.splice("no markers here", "environments", "x")
    begin = docgen.BEGIN.format(name="t")
    end = docgen.END.format(name="t")
    page = f"intro\n{begin}\nold\n{end}\noutro\n"
    assert docgen.splice(page, "t", "new") == f"intro\n{begin}\n\nnew\n\n{end}\noutro\n"


def test_envs_markdown_lists_every_environment(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["envs", "list", "--markdown"]) == 0
    out = capsys.readouterr().out
    catalogue, _, old_names = out.partition("Old family names")
    rows = [line for line in catalogue.splitlines() if line.startswith("| ") and "---" not in line]
    header, body = rows[0], rows[1:]
    assert header == "| name | module | what difficulty scales | answer format |"
    names = env_names()
    assert [row.split(" | ")[0].removeprefix("| ") for row in body] == sorted(names)
    by_name = {row.split(" | ")[0].removeprefix("| "): row for row in body}
    cls = ENVIRONMENTS.get("addition").part
    assert by_name["addition"].split(" | ")[1] == cls.family
    assert by_name["addition"].endswith("| boxed |")
    coded = [n for n in names if ENVIRONMENTS.get(n).part.answer_format.style == "code"]
    assert coded and all(
        f"| code ({ENVIRONMENTS.get(n).part.answer_format.language}) |" in by_name[n] for n in coded
    )
    assert out.startswith(f"{len(names)} environments in {len(families())} modules.")
    assert "| graph_optimization | graphs/colourings, graphs/covers_flows," in old_names


def test_envs_markdown_family_filter_and_escaping() -> None:
    family = ENVIRONMENTS.get("addition").part.family
    table = docgen.envs_markdown(family)
    assert table.startswith(f"{len(env_names(family=family))} environments in 1 module.")
    assert "Old family names" not in table
    assert docgen._cell("a | b\n c") == "a \\| b c"


def test_config_explain_prints_type_default_description(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from verirl.config import RolloutConfig, TrainConfig

    assert main(["config", "explain", "rollout.max_new_tokens"]) == 0
    out = capsys.readouterr().out
    description = RolloutConfig.model_fields["max_new_tokens"].description
    assert description and " ".join(description.split()) in out
    assert "type: int" in out
    assert f"default: {TrainConfig().rollout.max_new_tokens}" in out


def test_config_explain_section_lists_its_fields(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config", "explain", "optim"]) == 0
    out = capsys.readouterr().out
    assert "optim.lr" in out and "optim.weight_decay" in out


def test_config_explain_unknown_field_names_nearest(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["config", "explain", "rollout.max_new_token"]) == 2
    err = capsys.readouterr().err
    assert "unknown config field 'rollout.max_new_token'" in err
    assert "rollout.max_new_tokens" in err
    assert len(err.strip().splitlines()) == 1
    assert main(["config", "explain", "zzz"]) == 2
    assert "nearest valid fields: " in capsys.readouterr().err


def test_config_reference_covers_every_field() -> None:
    fields = docgen.config_fields()
    paths = {f.path for f in fields}
    assert {"run.seed", "rollout.engine", "curriculum.tau_acc", "optim.lr"} <= paths
    reference = docgen.config_markdown()
    for f in fields:
        if not f.section:
            assert f"`{f.path}`" in reference
    assert all(f.description for f in fields if not f.section), [
        f.path for f in fields if not f.section and not f.description
    ]


def test_readme_is_short_and_its_doc_links_exist() -> None:
    root = DOCS.parent
    readme = (root / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 200, "the README stays short: move details into docs/"
    assert readme.startswith("```bash\n./run.sh train ")
    links = re.findall(r"\]\(((?:docs/)[^)#\s]+)(?:#[^)]*)?\)", readme)
    assert links, "the README links into the docs"
    missing = [link for link in links if not (root / link).is_file()]
    assert not missing, f"README links to missing pages: {missing}"
