"""Agents in the model's own language (architecture rule 13).

- :mod:`~verirl.tools.typed`: any typed, documented callable is a tool (JSON schema through
  transformers' ``get_json_schema``; strict argument types; calls bounded in time and output;
  errors as observations).
- :mod:`~verirl.tools.toolset`: toolsets, a registered part (``calculator``, ``python`` in the
  sandbox, ``mcp`` for an MCP server's tools, and each tool environment's own).
- :mod:`~verirl.tools.formats`: a parser per model family's tool-call format (Hermes/Qwen
  ``<tool_call>``, Llama 3.x JSON, Mistral ``[TOOL_CALLS]``, the project's ``chatml_tools``
  template for SmolLM2); an unreadable call is a wrong-format verdict.
- :mod:`~verirl.tools.templates`: which chat template and format a model's episodes use.
- :mod:`~verirl.tools.bridge` and :mod:`~verirl.tools.template_check`: token-exact episodes
  (sampled tokens verbatim, only the glue tokenized) and the prefix-preservation check that
  refuses a template that would break them.
- :mod:`~verirl.tools.session`: one episode's turn logic, shared by every path.
"""

from __future__ import annotations

from verirl.tools.calls import ParsedReply, ToolCall
from verirl.tools.formats import TOOL_FORMATS, ToolFormat, detect_format, get_format
from verirl.tools.session import ToolSession, TurnOutcome
from verirl.tools.toolset import TOOLSETS, FunctionToolset, Toolset, build_toolset
from verirl.tools.typed import Tool, ToolLimits, ToolResult, tool


@TOOLSETS.builtins
def _builtins() -> None:
    from verirl.tools import builtin, mcp  # noqa: F401  (fastmcp loads when one is built)


__all__ = [
    "TOOLSETS",
    "TOOL_FORMATS",
    "FunctionToolset",
    "ParsedReply",
    "Tool",
    "ToolCall",
    "ToolFormat",
    "ToolLimits",
    "ToolResult",
    "ToolSession",
    "Toolset",
    "TurnOutcome",
    "build_toolset",
    "detect_format",
    "get_format",
    "tool",
]
