"""Run reports: plots and a self-contained HTML page from a run directory.

A run directory (:mod:`verirl.trainer`) holds ``config.yaml``, ``metrics.jsonl`` (one
``{"step": s, "time": t, ...}`` object per line, ``null`` for non-finite values),
``checkpoint-*`` directories, ``health.jsonl`` (the run-health warnings,
:mod:`verirl.train.health`: marked on every curve and listed) and, when something evaluated the
run's policies, ``evals/*.json`` (numbers with intervals, :mod:`verirl.evals.records`: plotted
with error bars and listed). :func:`load_run` reads it, :func:`plot_run` draws PNGs (matplotlib
Figures rendered by Agg directly: no pyplot, no display), :func:`write_report` writes
``report.html`` with them embedded as base64 and :func:`compare_runs` overlays several runs.
The HTML is plain HTML with inline CSS: no JavaScript, nothing fetched from the network.
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import yaml
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from verirl.evals.records import EvalRecord, read_eval_records
from verirl.train.health import HealthEvent, read_events

_CHECKPOINT = re.compile(r"^checkpoint-(\d+)$")
_EVAL = ("eval_before", "eval_after")
_PANELS_PER_FIGURE = 12


class RunDirError(FileNotFoundError):
    """A run directory, or a file a report needs, is missing or unreadable."""


@dataclass
class RunData:
    """One run: its config, its metric rows (in file order) and what else was found."""

    run_dir: Path
    config: dict[str, Any]
    rows: list[dict[str, Any]]
    checkpoints: list[Path] = field(default_factory=list)
    config_text: str = ""
    warnings: list[str] = field(default_factory=list)
    health: list[HealthEvent] = field(default_factory=list)
    evals: list[EvalRecord] = field(default_factory=list)

    @property
    def name(self) -> str:
        """``run.name`` from the config, else the directory name."""
        run = self.config.get("run")
        name = run.get("name") if isinstance(run, dict) else None
        return str(name) if name else self.run_dir.name

    @cached_property
    def columns(self) -> dict[str, tuple[list[int], list[float]]]:
        """Per metric key (first-seen order): the steps of the rows logging it and the values,
        a null (non-finite) or non-numeric value read as NaN."""
        cols: dict[str, tuple[list[int], list[float]]] = {}
        for r in self.rows:
            for k, v in r.items():
                if k not in ("step", "time"):
                    steps, vals = cols.setdefault(k, ([], []))
                    steps.append(int(r["step"]))
                    vals.append(_num(v))
        return cols

    def series(self, key: str) -> tuple[list[int], list[float]]:
        """Steps and values of the rows that log ``key`` (NaN for nulls); empty when absent."""
        return self.columns.get(key, ([], []))

    def finite(self, key: str) -> list[float]:
        """The finite values of ``key`` in step order."""
        return [v for v in self.series(key)[1] if math.isfinite(v)]

    def last(self, key: str) -> float | None:
        """The last finite value of ``key``; None when there is none."""
        vals = self.finite(key)
        return vals[-1] if vals else None

    def has(self, key: str) -> bool:
        """Whether ``key`` has at least one finite value."""
        return any(math.isfinite(v) for v in self.series(key)[1])

    def curriculum_envs(self) -> list[str]:
        """Environments with a ``curriculum/<env>/h`` series, in first-seen order."""
        return self._matching(r"curriculum/(.+)/h", exclude="last")

    def eval_envs(self) -> list[str]:
        """Environments with ``eval_before/<env>/accuracy`` or ``eval_after/<env>/accuracy``."""
        return self._matching(r"eval_(?:before|after)/(.+)/accuracy")

    def _matching(self, pattern: str, exclude: str = "") -> list[str]:
        found = (re.fullmatch(pattern, k) for k in self.columns)
        names = (m.group(1) for m in found if m and m.group(1) != exclude)
        return list(dict.fromkeys(names))


def load_run(run_dir: str | Path) -> RunData:
    """Read a run directory.

    ``metrics.jsonl`` is required (RunDirError naming the missing file otherwise); a missing or
    unreadable ``config.yaml`` only adds a warning. Lines that are not JSON objects — e.g. the
    half-written last line of a killed run — are skipped with a warning.
    """
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise RunDirError(f"run directory {str(run_dir)!r} does not exist or is not a directory")
    metrics = run_dir / "metrics.jsonl"
    if not metrics.is_file():
        found = ", ".join(sorted(p.name for p in run_dir.iterdir())[:10]) or "nothing"
        raise RunDirError(
            f"run directory {str(run_dir)!r} has no metrics.jsonl (found: {found}); "
            "was training started?"
        )
    lines = [x for x in metrics.read_text(errors="replace").splitlines() if x.strip()]
    rows = [r for r in map(_parse, lines) if r is not None]
    warnings = [f"metrics.jsonl: skipped {len(lines) - len(rows)} unreadable line(s)"]
    warnings = warnings if len(rows) < len(lines) else []
    if not rows:
        raise RunDirError(f"{str(metrics)!r} holds no metric rows")
    cfg_path = run_dir / "config.yaml"
    config_text = cfg_path.read_text(errors="replace") if cfg_path.is_file() else ""
    if not cfg_path.is_file():
        warnings.append("config.yaml is missing")
    try:
        loaded = yaml.safe_load(config_text)
    except yaml.YAMLError as exc:
        warnings.append(f"config.yaml is not valid YAML: {exc}")
        loaded = None
    config = loaded if isinstance(loaded, dict) else {}
    ckpts = [p for p in run_dir.iterdir() if p.is_dir() and _CHECKPOINT.match(p.name)]
    ckpts.sort(key=lambda p: int(p.name[len("checkpoint-") :]))
    evals, eval_warnings = read_eval_records(run_dir)
    warnings += eval_warnings
    return RunData(run_dir, config, rows, ckpts, config_text, warnings, read_events(run_dir), evals)


def _parse(line: str) -> dict[str, Any] | None:
    try:
        row = json.loads(line)
    except json.JSONDecodeError:
        return None
    return row if isinstance(row, dict) and math.isfinite(_num(row.get("step"))) else None


def _num(v: Any) -> float:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return math.nan
    return f if math.isfinite(f) else math.nan


def moving_average(values: Sequence[float], window: int) -> list[float]:
    """Trailing mean over the last ``window`` values, ignoring NaN (NaN if all are NaN)."""
    means = (
        _mean([v for v in values[max(0, i - window + 1) : i + 1] if math.isfinite(v)])
        for i in range(len(values))
    )
    return [math.nan if m is None else m for m in means]


def _window(n: int) -> int:
    """Moving-average window for ``n`` points: a fifth of them, at most 25."""
    return max(1, min(25, n // 5))


def _mean(vals: list[float]) -> float | None:
    return sum(vals) / len(vals) if vals else None


def summarize(run: RunData) -> dict[str, Any]:
    """The report's summary numbers (None where the run has no data for one).

    ``steps`` is the last training step (eval rows excluded); ``wall_s`` the time between the
    first and last logged lines; ``eval`` maps ``overall`` and each environment to held-out
    ``before``/``after`` accuracy and ``diff_pts`` = 100·(after − before).
    """
    evals = {k for k in run.columns if k.startswith(_EVAL)}
    steps = [int(r["step"]) for r in run.rows if not evals.intersection(r)]
    times = [t for t in (_num(r.get("time")) for r in run.rows) if math.isfinite(t)]
    rewards, accs = run.finite("rollout/reward"), run.finite("rollout/accuracy")
    run_cfg = run.config.get("run")
    out: dict[str, Any] = {
        "name": run.name,
        "steps": max(steps, default=0),
        "configured_steps": run_cfg.get("steps") if isinstance(run_cfg, dict) else None,
        "wall_s": max(times) - min(times) if len(times) > 1 else None,
        "step_s_total": sum(run.finite("time/step_s")) or None,
        "final_reward": rewards[-1] if rewards else None,
        "mean_reward": _mean(rewards),
        "final_accuracy": accs[-1] if accs else None,
        "mean_accuracy": _mean(accs),
        "tokens_per_s": _mean(run.finite("throughput/tokens_per_s")),
        "checkpoints": [p.name for p in run.checkpoints],
        "health": [f"{e.detector} (step {e.step})" for e in run.health],
        "eval": {},
        "curriculum": {},
    }
    for env in ["overall", *run.eval_envs()]:
        sub = "accuracy" if env == "overall" else f"{env}/accuracy"
        before, after = run.last(f"eval_before/{sub}"), run.last(f"eval_after/{sub}")
        diff = (after - before) * 100 if before is not None and after is not None else None
        if before is not None or after is not None:
            out["eval"][env] = {"before": before, "after": after, "diff_pts": diff}
    for env in run.curriculum_envs():
        out["curriculum"][env] = {
            k: run.last(f"curriculum/{env}/{k}") for k in ("h", "low", "acc_at_h")
        }
    return out


def _figure(n: int, cols: int = 2, height: float = 3.0, width: float = 5.2) -> tuple[Figure, list]:
    cols = min(cols, n)
    rows = math.ceil(n / cols)
    fig = Figure(figsize=(width * cols, height * rows), layout="constrained")
    return fig, [fig.add_subplot(rows, cols, i + 1) for i in range(n)]


def _line(ax: Axes, run: RunData, key: str, label: str | None = None, smooth: bool = False) -> None:
    steps, vals = run.series(key)
    w = _window(len(vals))
    if smooth and w > 1:
        (raw,) = ax.plot(steps, vals, alpha=0.3, lw=1)
        ma, text = moving_average(vals, w), f"{label or key} (MA {w})"
        ax.plot(steps, ma, color=raw.get_color(), lw=2, label=text)
    else:
        ax.plot(steps, vals, lw=1.5, label=label or key, marker="." if len(steps) < 30 else None)


def _style(ax: Axes, title: str, ylabel: str = "", legend: bool = True) -> None:
    ax.set_title(title, fontsize=10)
    ax.set_xlabel("step")
    ax.set_ylabel(ylabel)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.grid(alpha=0.3)
    if legend and ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8)


def _panels(run: RunData, keys: list[str], title: str = "", cols: int = 2) -> Figure:
    """One small panel per key, titled by the key less its first segment."""
    fig, axes = _figure(len(keys), cols=cols, height=2.8)
    for ax, key in zip(axes, keys, strict=True):
        _line(ax, run, key)
        _style(ax, key.split("/", 1)[-1], legend=False)
    fig.suptitle(title)
    return fig


def _bars(ax: Axes, labels: list[str], groups: dict[str, list[float]], title: str) -> None:
    """Grouped bars of rates in [0, 1], each labelled with its percentage (n/a for NaN)."""
    width = 0.8 / max(1, len(groups))
    for j, (name, vals) in enumerate(groups.items()):
        xs = [i + (j - (len(groups) - 1) / 2) * width for i in range(len(labels))]
        bars = ax.bar(xs, [0 if math.isnan(v) else v for v in vals], width, label=name)
        texts = ["n/a" if math.isnan(v) else f"{v:.0%}" for v in vals]
        ax.bar_label(bars, texts, fontsize=7)
    ax.set_xticks(range(len(labels)), labels, rotation=20, ha="right", fontsize=8)
    ax.set_ylim(0, 1.12)
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=8)


def _aligned(run: RunData, key: str, steps: list[int]) -> list[float]:
    by_step = dict(zip(*run.series(key), strict=True))
    return [by_step.get(s, math.nan) for s in steps]


def _present(run: RunData, keys: Sequence[str]) -> list[str]:
    return [k for k in keys if run.has(k)]


def run_figures(run: RunData) -> dict[str, Figure]:
    """The run's figures by file stem; figures and panels without data are left out."""
    figs: dict[str, Figure] = {}
    if main := _present(run, ["rollout/reward", "rollout/accuracy"]):
        fig, axes = _figure(len(main))
        for ax, key in zip(axes, main, strict=True):
            _line(ax, run, key, smooth=True)
            _style(ax, key.split("/")[-1])
        figs["reward_accuracy"] = fig
    if envs := [e for e in run.curriculum_envs() if run.has(f"curriculum/{e}/h")]:
        fig, (ax,) = _figure(1, height=3.6, width=8.0)
        for env in envs:
            steps, high = run.series(f"curriculum/{env}/h")
            (ln,) = ax.plot(steps, high, lw=1.8, label=env, drawstyle="steps-post")
            if run.has(f"curriculum/{env}/low"):
                low = _aligned(run, f"curriculum/{env}/low", steps)
                ax.fill_between(steps, low, high, step="post", alpha=0.15, color=ln.get_color())
        _style(ax, "curriculum difficulty h (band: window low..h)", "difficulty")
        figs["curriculum"] = fig
    opt = ["train/loss", "train/grad_norm", "train/clip_frac", "train/approx_kl_old"]
    if opt := _present(run, opt):
        figs["optimization"] = _panels(run, opt)
    timing = _present(run, ["time/rollout_s", "time/train_s", "time/step_s"])
    tps = run.has("throughput/tokens_per_s")
    if timing or tps:
        fig, axes = _figure(bool(timing) + tps)
        if timing:
            if "time/rollout_s" in timing and "time/train_s" in timing:
                steps, roll = run.series("time/rollout_s")
                roll = [0.0 if math.isnan(v) else v for v in roll]
                train = _aligned(run, "time/train_s", steps)
                axes[0].bar(steps, roll, 1.0, label="rollout", alpha=0.8)
                axes[0].bar(steps, train, 1.0, bottom=roll, label="train", alpha=0.8)
            if "time/step_s" in timing:
                _line(axes[0], run, "time/step_s", label="step total")
            _style(axes[0], "step time", "seconds")
        if tps:
            _line(axes[-1], run, "throughput/tokens_per_s", smooth=True, label="tokens/s")
            _style(axes[-1], "throughput", "tokens / s")
        figs["timing"] = fig
    if ev := summarize(run)["eval"]:
        fmt = [e for e in run.eval_envs() if _present(run, [f"{p}/{e}/format" for p in _EVAL])]
        cols, width = (2, 5.2) if len(ev) <= 5 else (1, min(16.0, 0.8 * len(ev) + 1.5))
        fig, axes = _figure(1 + bool(fmt), cols=cols, width=width, height=3.6)
        groups = {w: [_num(ev[e][w]) for e in ev] for w in ("before", "after")}
        _bars(axes[0], list(ev), groups, "held-out accuracy before vs after training")
        if fmt:
            fmts = {w: [_num(run.last(f"eval_{w}/{e}/format")) for e in fmt] for w in groups}
            _bars(axes[1], fmt, fmts, "held-out format rate before vs after")
        figs["eval"] = fig
    for prefix in ("collector", "reward"):
        keys = sorted(k for k in run.columns if k.startswith(prefix + "/") and run.has(k))
        for i in range(0, len(keys), _PANELS_PER_FIGURE):
            stem = prefix if i == 0 else f"{prefix}_{i // _PANELS_PER_FIGURE + 1}"
            figs[stem] = _panels(run, keys[i : i + _PANELS_PER_FIGURE], f"{prefix}/*", cols=3)
    for fig in figs.values():  # health warnings on every curve over steps
        for ax in fig.axes:
            if ax.get_xlabel() == "step":
                _mark_events(ax, run.health)
    if run.evals:
        figs["evals"] = _evals_figure(run.evals)
    return figs


def _mark_events(ax: Axes, events: Sequence[HealthEvent]) -> None:
    """A dashed red line at each health event's step, labelled with the detector."""
    for e in events:
        ax.axvline(e.step, color="#b42318", ls="--", lw=1, alpha=0.8)
        ax.annotate(
            e.detector,
            xy=(e.step, 0.98),
            xycoords=("data", "axes fraction"),
            rotation=90,
            fontsize=7,
            color="#b42318",
            ha="right",
            va="top",
        )


def _policy_order(r: EvalRecord) -> tuple[int, float]:
    """Base policies first, then by training step, final ones last (else file order)."""
    label = (r.label or "").lower()
    if label in ("before", "base", "initial"):
        return (0, 0.0)
    if label in ("after", "final"):
        return (2, 0.0)
    return (1, math.inf if r.step is None else float(r.step))


def _evals_figure(records: Sequence[EvalRecord]) -> Figure:
    """One panel per (benchmark, metric): each evaluated policy's value with its interval."""
    keys = list(dict.fromkeys((r.benchmark, r.metric) for r in records))
    fig, axes = _figure(len(keys), cols=min(3, len(keys)), height=3.2, width=4.4)
    for ax, (bench, metric) in zip(axes, keys, strict=True):
        rs = [r for r in records if (r.benchmark, r.metric) == (bench, metric)]
        labels = list(dict.fromkeys(r.policy for r in sorted(rs, key=_policy_order)))
        for r in rs:
            x = labels.index(r.policy)
            if r.low is not None and r.high is not None:
                err = [[max(0.0, r.value - r.low)], [max(0.0, r.high - r.value)]]
                ax.errorbar([x], [r.value], yerr=err, fmt="o", capsize=4, color="C0")
            else:
                ax.plot([x], [r.value], "o", color="C0")
            ax.annotate(f"{r.value:.3g}", (x, r.value), xytext=(6, 0), textcoords="offset points")
        ax.set_xticks(range(len(labels)), labels, rotation=20, ha="right", fontsize=8)
        ax.set_xlim(-0.5, len(labels) - 0.5)
        ax.set_title(f"{bench} {metric}", fontsize=10)
        ax.grid(alpha=0.3, axis="y")
    fig.suptitle("evaluations (bars: the interval each file reports)")
    return fig


def plot_run(run: RunData, out_dir: str | Path) -> list[Path]:
    """Write the run's figures as PNGs into ``out_dir`` (created); return their paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    figs = run_figures(run)
    for stem, fig in figs.items():
        fig.savefig(out / f"{stem}.png", dpi=100)
    return [out / f"{stem}.png" for stem in figs]


_CSS = """body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1150px;padding:0 1em}
h2{border-bottom:1px solid #ddd}table{border-collapse:collapse}td,th{border:1px solid #ccc;
padding:.25em .6em;text-align:left}th{background:#f3f3f3}.up{color:#1a7f37}.down{color:#b42318}
img{max-width:100%}pre{background:#f7f7f7;padding:1em;overflow:auto}.warn{color:#b54708}"""


def _e(x: Any) -> str:
    return html.escape(str(x))


def _fmt(v: float | None, spec: str = ".4g") -> str:
    return "—" if v is None else format(v, spec)


def _pct(v: float | None) -> str:
    return "—" if v is None else f"{v * 100:.1f}%"


def _duration(s: float | None) -> str:
    if s is None:
        return "—"
    h, rem = divmod(round(s), 3600)
    return f"{h}:{rem // 60:02d}:{rem % 60:02d}"


def _change(ev: dict[str, float | None]) -> str:
    """``before → after (±d.d pts)`` with the difference coloured."""
    diff = ev.get("diff_pts")
    text = _e(f"{_pct(ev.get('before'))} → {_pct(ev.get('after'))}")
    if diff is None:
        return text
    cls = "up" if diff > 0 else "down" if diff < 0 else ""
    return f'{text} <span class="{cls}">({diff:+.1f} pts)</span>'


def _table(rows: Sequence[Sequence[str]], head: Sequence[str] = ()) -> str:
    """An HTML table from already-escaped cells; without ``head`` the first column is a header."""
    top = "<tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr>" if head else ""
    tag = "td" if head else "th"
    body = "".join(
        f"<tr><{tag}>{r[0]}</{tag}>" + "".join(f"<td>{c}</td>" for c in r[1:]) + "</tr>"
        for r in rows
    )
    return f"<table>{top}{body}</table>"


def _summary_rows(s: dict[str, Any]) -> list[tuple[str, str]]:
    steps = f"{s['steps']}" + (f" / {s['configured_steps']}" if s["configured_steps"] else "")
    rows = [
        ("steps (done / configured)", _e(steps)),
        ("wall time (first → last log line)", _duration(s["wall_s"])),
        ("sum of step times", _duration(s["step_s_total"])),
        ("final reward", _fmt(s["final_reward"])),
        ("mean reward", _fmt(s["mean_reward"])),
        ("final train accuracy", _pct(s["final_accuracy"])),
        ("mean train accuracy", _pct(s["mean_accuracy"])),
        ("mean tokens/s", _fmt(s["tokens_per_s"], ".1f")),
        ("checkpoints", _e(", ".join(s["checkpoints"]) or "none")),
        ("health warnings", _e(", ".join(s["health"]) or "none")),
    ]
    for env, ev in s["eval"].items():
        rows.append((f"held-out accuracy {_e(env)} (before → after)", _change(ev)))
    for env, c in s["curriculum"].items():
        low, high = _fmt(c["low"], "g"), _fmt(c["h"], "g")
        window = f" (window {low}–{high})" if c["low"] is not None else ""
        acc = f", accuracy at h {_pct(c['acc_at_h'])}" if c["acc_at_h"] is not None else ""
        rows.append((f"final h {_e(env)}", f"{high}{window}{acc}"))
    return rows


def _health_section(run: RunData) -> list[str]:
    head = ["<h2>Run health</h2>"]
    if not run.health:
        return [*head, "<p>no health warnings (health.jsonl holds none)</p>"]
    rows = [
        [str(e.step), _e(e.detector), _e(e.message), _e(e.setting)]
        for e in sorted(run.health, key=lambda e: e.step)
    ]
    note = "<p>each warning is also a dashed red line, labelled, on the curves below</p>"
    return [*head, _table(rows, ["step", "detector", "what was seen", "what to change"]), note]


def _evals_section(run: RunData) -> list[str]:
    if not run.evals:
        return []
    rows = []
    for r in run.evals:
        interval = "—"
        if r.low is not None and r.high is not None:
            interval = f"[{r.low:.4g}, {r.high:.4g}]"
        n = "—" if r.n is None else str(r.n)
        method = _e(r.method or "—")
        rows.append([_e(r.benchmark), _e(r.metric), _e(r.policy), f"{r.value:.4g}", interval])
        rows[-1] += [method, n, _e(r.source)]
    head = ["benchmark", "metric", "policy", "value", "interval", "method", "n", "file"]
    return ["<h2>Evaluations</h2>", _table(rows, head)]


def _img(data: bytes, alt: str) -> str:
    b64 = base64.b64encode(data).decode("ascii")
    return f'<img alt="{_e(alt)}" src="data:image/png;base64,{b64}">'


def _fig_img(fig: Figure, alt: str) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=100)
    return _img(buf.getvalue(), alt)


def _page(title: str, parts: list[str]) -> str:
    body = "\n".join(parts)
    return (
        f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{_e(title)}</title>'
        f"<style>{_CSS}</style></head><body>\n<h1>{_e(title)}</h1>\n{body}\n</body></html>\n"
    )


def write_report(run_dir: str | Path, plots_dir: str | Path | None = None) -> Path:
    """Write ``<run_dir>/report.html`` and return its path.

    The PNGs of :func:`plot_run` are written to ``plots_dir`` (default ``<run_dir>/plots``) and
    embedded as base64, so the HTML file stands alone.
    """
    run = load_run(run_dir)
    pngs = plot_run(run, Path(plots_dir) if plots_dir is not None else run.run_dir / "plots")
    parts = [f"<p>run directory: <code>{_e(run.run_dir.resolve())}</code></p>"]
    parts += [f'<p class="warn">warning: {_e(w)}</p>' for w in run.warnings]
    parts += ["<h2>Summary</h2>", _table(_summary_rows(summarize(run)))]
    parts += _health_section(run) + _evals_section(run) + ["<h2>Plots</h2>"]
    parts += [_img(p.read_bytes(), p.stem) for p in pngs] or ["<p>no plottable metrics</p>"]
    parts += ["<h2>Config</h2>", f"<pre>{_e(run.config_text or '(config.yaml missing)')}</pre>"]
    out = run.run_dir / "report.html"
    out.write_text(_page(f"verirl run report: {run.name}", parts))
    return out


def compare_runs(run_dirs: Sequence[str | Path], out: str | Path) -> Path:
    """Write one HTML page overlaying the runs of ``run_dirs`` and return its path.

    ``out`` is the ``.html``/``.htm`` file to write, or else a directory (created) that gets
    ``compare.html``. Runs are labelled by ``run.name`` (the directory added when names repeat).
    """
    if not run_dirs:
        raise ValueError("compare_runs needs at least one run directory")
    runs = [load_run(d) for d in run_dirs]
    names = [r.name for r in runs]
    labels = [r.name if names.count(r.name) == 1 else f"{r.name} ({r.run_dir})" for r in runs]
    out = Path(out)
    if out.suffix.lower() not in (".html", ".htm"):
        out = out / "compare.html"
    out.parent.mkdir(parents=True, exist_ok=True)
    head = ["run", "steps", "wall time", "final reward", "mean reward", "final accuracy"]
    head += ["held-out accuracy before → after"]
    rows, sums = [], [summarize(r) for r in runs]
    for s, label in zip(sums, labels, strict=True):
        overall = s["eval"].get("overall")
        row = [_e(label), str(s["steps"]), _duration(s["wall_s"]), _fmt(s["final_reward"])]
        row += [_fmt(s["mean_reward"]), _pct(s["final_accuracy"]), _change(overall or {})]
        rows.append(row)
    parts = ["<h2>Runs</h2>", _table(rows, head)]
    for run, label in zip(runs, labels, strict=True):
        parts += [f'<p class="warn">{_e(label)}: {_e(w)}</p>' for w in run.warnings]
    parts.append("<h2>Plots</h2>")
    keys = ["rollout/reward", "rollout/accuracy", "curriculum/mean_h"]
    if keys := [k for k in keys if any(r.has(k) for r in runs)]:
        fig, axes = _figure(len(keys))
        for ax, key in zip(axes, keys, strict=True):
            for i, (run, label) in enumerate(zip(runs, labels, strict=True)):
                steps, vals = run.series(key)
                ma = moving_average(vals, _window(len(vals)))
                if pts := [(s, v) for s, v in zip(steps, ma, strict=True) if math.isfinite(v)]:
                    ax.plot(*zip(*pts, strict=True), lw=1.8, label=label, color=f"C{i}")
            _style(ax, f"{key.split('/')[-1]} (moving average)")
        parts.append(_fig_img(fig, "training"))
    evals = [s["eval"] for s in sums]
    if envs := list(dict.fromkeys(e for ev in evals for e in ev)):
        width = min(16.0, max(5.2, 0.4 * len(envs) * (len(runs) + 1) + 1.5))
        fig, axes = _figure(2, cols=1 if width > 8 else 2, width=width, height=3.6)
        for ax, when in zip(axes, ("before", "after"), strict=True):
            groups = {
                label: [_num(ev.get(e, {}).get(when)) for e in envs]
                for label, ev in zip(labels, evals, strict=True)
            }
            _bars(ax, envs, groups, f"held-out accuracy {when} training")
        parts.append(_fig_img(fig, "eval"))
    out.write_text(_page(f"verirl comparison: {' vs '.join(labels)}", parts))
    return out
