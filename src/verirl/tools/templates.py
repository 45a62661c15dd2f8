"""Which chat template and tool-call format a tool episode uses.

The model's own template is used when it renders tools (``apply_chat_template(tools=...)``
writes them into the prompt); its format is detected from its text
(:func:`verirl.tools.formats.detect_format`) unless named. A ChatML template without tool
support (SmolLM2-Instruct's) gets the project's ``chatml_tools`` template, which renders
everything else exactly as SmolLM2's does. Any other template without tool support is refused
with one line naming the fix.

A template is named by a registered name (:data:`PROJECT_TEMPLATES`), a path to a ``.jinja``
file, or given as its text.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from verirl.errors import UserInputError
from verirl.tools.formats import TOOL_FORMATS, ToolFormat, detect_format, get_format

TEMPLATE_DIR = Path(__file__).parent / "templates"
PROJECT_TEMPLATES: dict[str, str] = {"chatml_tools": "chatml_tools.jinja"}
"""The project's own chat templates, by name (files in ``verirl/tools/templates``)."""

_PROBE_TOOL = {
    "type": "function",
    "function": {
        "name": "verirl_probe_tool",
        "description": "A probe.",
        "parameters": {"type": "object", "properties": {}},
    },
}


@cache
def project_template(name: str) -> str:
    """The text of the project template ``name``."""
    if name not in PROJECT_TEMPLATES:
        raise UserInputError(
            f"unknown chat template {name!r}; the project's: {', '.join(PROJECT_TEMPLATES)} "
            "(or give a path to a .jinja file)"
        )
    return (TEMPLATE_DIR / PROJECT_TEMPLATES[name]).read_text()


def load_chat_template(spec: str) -> str:
    """A chat template from a project template name, a ``.jinja`` path, or its text."""
    if spec in PROJECT_TEMPLATES:
        return project_template(spec)
    if "{%" in spec or "{{" in spec:
        return spec
    path = Path(spec).expanduser()
    if not path.is_file():
        raise UserInputError(
            f"chat template {spec!r} is neither a project template "
            f"({', '.join(PROJECT_TEMPLATES)}) nor a readable file"
        )
    return path.read_text()


def renders_tools(tokenizer: Any, template: str | None) -> bool:
    """Whether ``template`` (``None``: the tokenizer's) writes the tools it is given into the
    prompt."""
    try:
        text = tokenizer.apply_chat_template(
            [{"role": "user", "content": "hi"}],
            tools=[_PROBE_TOOL],
            chat_template=template,
            tokenize=False,
            add_generation_prompt=True,
        )
    except Exception:
        return False
    return isinstance(text, str) and "verirl_probe_tool" in text


def resolve_tool_template(
    tokenizer: Any, fmt: str = "auto", chat_template: str | None = None
) -> tuple[str, ToolFormat]:
    """The chat template (its text) and tool-call format of a tool episode for
    ``tokenizer``; see the module docstring. Raises :class:`UserInputError` in one line
    naming the fix when no tool template can be found or the format cannot be told."""
    if chat_template is not None:
        text = load_chat_template(chat_template)
        if not renders_tools(tokenizer, text):
            raise UserInputError(
                f"chat template {chat_template[:80]!r} does not render tools; give one that "
                "does (e.g. 'chatml_tools' for a ChatML model)"
            )
    else:
        own = getattr(tokenizer, "chat_template", None)
        if isinstance(own, str) and renders_tools(tokenizer, None):
            text = own
        elif isinstance(own, str) and "<|im_start|>" in own:
            text = project_template("chatml_tools")
        else:
            raise UserInputError(
                "the tokenizer's chat template renders no tools and is not ChatML: set the "
                "tool_calls collector's chat_template to a template with tool support"
            )
    if fmt != "auto":
        return text, get_format(fmt)
    detected = detect_format(text)
    if detected is None:
        raise UserInputError(
            "cannot tell which tool-call format this chat template writes; set the tool_calls "
            f"collector's format to one of: {', '.join(TOOL_FORMATS.names())}"
        )
    return text, get_format(detected)
