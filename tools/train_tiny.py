"""Train the tiny decoders of the experiment pages on this machine's CPU and store the results.

    python -m tools.train_tiny            # the whole experiment (minutes)
    python -m tools.train_tiny --quick    # a smoke run in seconds (tests use it)

Two experiments (pages: docs/extrapolation.md, docs/induction.md):

* **Extrapolation.** For each task (``repeat``, ``kback``; :mod:`mhalib.models.tiny_tasks`),
  each positional method (none, sinusoidal, learned, rope, alibi) and each seed, a fresh
  decoder (:mod:`mhalib.models.tiny`) is trained at length ``L_train`` and evaluated on
  fresh sequences of 1x, 2x, 4x and 8x that length: accuracy and loss on the scored
  positions, overall and per bucket of ``L_train`` positions. A learned table has no rows
  past ``L_train``: those results are stored as null ("not defined"), never as 0. The RoPE
  models are also evaluated with position interpolation and NTK-aware scaling
  (``factor = L / L_train``), without retraining.
* **Induction.** A 2-layer attention-only decoder learns the repeat task; every
  ``checkpoint_every`` steps its loss on a fixed batch and the previous-token and induction
  scores of every head (:mod:`mhalib.models.head_analysis`) are recorded. The weights at
  the checkpoint before the loss drops and at the end are stored.

Determinism: every run seeds torch (initial weights) and numpy (its batches) from its seed,
runs on one thread with ``torch.use_deterministic_algorithms(True)``, and the runs are
spread over ``--jobs`` worker processes (2 by default, one per core) whose results are put
back in a fixed order, so the results do not depend on the number of jobs or on timing.

Output (``--out-dir``, default ``figures/data``): ``tiny_decoders.json`` (configuration,
results, machine, torch version, wall time) and ``tiny_decoders_weights.npz`` (the models
the pages draw: one per method on the kback task, seed 0; the induction model before and
after its drop), float32 arrays named ``MODEL/WEIGHT``.
"""
from __future__ import annotations

import argparse
import datetime
import json
import multiprocessing
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

from tools.measure_attention_memory import cpu_name  # (one way to name the machine)

ROOT = Path(__file__).resolve().parents[1]

JSON_NAME = "tiny_decoders.json"
WEIGHTS_NAME = "tiny_decoders_weights.npz"
SCHEMA_VERSION = 1
METHODS = ("none", "sinusoidal", "learned", "rope", "alibi")
#: The task whose models (seed ``stored_seed``, one per method) are stored for the attention maps.
STORED_TASK = "kback"

FULL = dict(
    L_train=32,
    eval_factors=[1, 2, 4, 8],
    seeds=[0, 1, 2],
    # repeat: 192 = the most distinct tokens a sequence of 8 x 32 = 256 holds (a 64-token segment, twice)
    # steps: sinusoidal needs about 2,000 steps to learn repeat (NoPE does not within 3,000); kback is
    # learnt in a few hundred steps by most methods
    tasks={"repeat": dict(vocab=192, steps=3000), "kback": dict(vocab=32, k=3, steps=1500)},
    model=dict(d_model=64, n_layers=2, n_heads=4, d_ff=128),
    train=dict(batch_size=32, lr=3e-3, warmup=50),
    eval=dict(n_seqs=64, seed=1000),
    induction=dict(task="repeat", vocab=64, method="learned", seeds=[0, 1, 2],
                   model=dict(d_model=64, n_layers=2, n_heads=4, d_ff=0),
                   train=dict(steps=600, batch_size=32, lr=3e-3, warmup=50),
                   checkpoint_every=10, eval_seqs=32, eval_seed=2000),
    stored_seed=0,
)
QUICK = dict(
    L_train=8,
    eval_factors=[1, 2],
    seeds=[0, 1],
    tasks={"repeat": dict(vocab=12, steps=4), "kback": dict(vocab=8, k=2, steps=3)},
    model=dict(d_model=16, n_layers=1, n_heads=2, d_ff=16),
    train=dict(batch_size=4, lr=3e-3, warmup=1),
    eval=dict(n_seqs=4, seed=1000),
    induction=dict(task="repeat", vocab=16, method="learned", seeds=[0],
                   model=dict(d_model=16, n_layers=2, n_heads=2, d_ff=0),
                   train=dict(steps=6, batch_size=4, lr=1e-3, warmup=1),
                   checkpoint_every=2, eval_seqs=4, eval_seed=2000),
    stored_seed=0,
)


# ---- work units (run in worker processes) ------------------------------------------------------

def _worker_init() -> None:
    from mhalib.models.tiny import set_deterministic

    set_deterministic(1)


def _config(cfg: dict, task: str, method: str):
    from mhalib.models.tiny_numpy import TinyConfig

    return TinyConfig(vocab=cfg["tasks"][task]["vocab"], method=method, max_len=cfg["L_train"], **cfg["model"])


def _eval_batch(cfg: dict, task: str, length: int) -> dict:
    from mhalib.models.tiny_tasks import make_batch

    spec = cfg["tasks"][task]
    # one fixed evaluation set per task and length, shared by every method and seed
    return make_batch(task, cfg["eval"]["n_seqs"], length, vocab=spec["vocab"], k=spec.get("k", 3),
                      rng=cfg["eval"]["seed"] + length)


def extrapolation_run(cfg: dict, task: str, method: str, seed: int) -> dict:
    """Train one model and evaluate it at every length (and, for RoPE, with each scaling)."""
    from mhalib.models.tiny import evaluate, train

    t0, c0 = time.perf_counter(), time.process_time()
    config = _config(cfg, task, method)
    spec = cfg["tasks"][task]
    model, losses = train(config, task, length=cfg["L_train"], seed=seed, k=spec.get("k", 3), steps=spec["steps"],
                          **cfg["train"])
    train_s = time.perf_counter() - t0
    L0 = cfg["L_train"]
    records = []
    for f in cfg["eval_factors"]:
        L = f * L0
        batch = _eval_batch(cfg, task, L)
        for scaling in ([None, "interpolation", "ntk"] if method == "rope" and f > 1 else [None]):
            rec = dict(task=task, method=method, seed=seed, length=L, factor=f, scaling=scaling)
            if method == "learned" and L > config.max_len:
                rec.update(defined=False, accuracy=None, loss=None, accuracy_buckets=None, loss_buckets=None)
            else:
                r = evaluate(model, batch, bucket=L0, rope_scaling=scaling, rope_factor=float(f) if scaling else 1.0)
                rec.update(defined=True, **r)
            records.append(rec)
    every = max(1, len(losses) // 50)
    training = dict(task=task, method=method, seed=seed, final_loss=float(np.mean(losses[-every:])),
                    loss_curve_every=every, loss_curve=[float(np.mean(losses[i:i + every]))
                                                        for i in range(0, len(losses), every)],
                    train_seconds=train_s, eval_seconds=time.perf_counter() - t0 - train_s,
                    cpu_seconds=time.process_time() - c0)
    weights = model.numpy_weights() if seed == cfg["stored_seed"] and task == STORED_TASK else None
    return dict(kind="extrapolation", records=records, training=training, weights=weights,
                config=config.to_dict())


def induction_run(cfg: dict, seed: int) -> dict:
    """Train the attention-only model, scoring its heads at every checkpoint."""
    import torch

    from mhalib.models import head_analysis as ha
    from mhalib.models.tiny import _tensors, masked_loss, train
    from mhalib.models.tiny_numpy import TinyConfig
    from mhalib.models.tiny_tasks import make_batch

    c0 = time.process_time()
    ic = cfg["induction"]
    L = cfg["L_train"]
    config = TinyConfig(vocab=ic["vocab"], method=ic["method"], max_len=L, **ic["model"])
    batch = make_batch(ic["task"], ic["eval_seqs"], L, vocab=ic["vocab"], rng=ic["eval_seed"])
    tokens, targets, scored = _tensors(batch)
    checkpoints, snapshots = [], {}

    def on_checkpoint(step, model):
        with torch.no_grad():
            logits, maps = model(tokens, return_attention=True)
            loss = float(masked_loss(logits, targets, scored))
            acc = float((logits.argmax(-1) == targets)[scored].float().mean())
        prev, ind = [], []
        for A in maps:  # (B, H, T, T) per layer
            A = A.numpy().astype(np.float64)
            # previous-token score over all queries; induction score on each sequence, then averaged
            prev.append(ha.previous_token_score(A, start=1).mean(0).tolist())  # (H,)
            ind.append(np.mean([ha.induction_score(A[b], batch["tokens"][b]) for b in range(A.shape[0])],
                               axis=0).tolist())  # (H,)
        checkpoints.append(dict(step=step, loss=loss, accuracy=acc, previous_token=prev, induction=ind))
        snapshots[step] = model.numpy_weights()

    _, losses = train(config, ic["task"], length=L, seed=seed, checkpoint_every=ic["checkpoint_every"],
                      on_checkpoint=on_checkpoint, **ic["train"])
    before, after = drop_checkpoints([c["loss"] for c in checkpoints])
    steps = [c["step"] for c in checkpoints]
    stored = {}
    if seed == cfg["stored_seed"]:
        stored = {"before": snapshots[steps[before]], "after": snapshots[steps[after]]}
    return dict(kind="induction", seed=seed, config=config.to_dict(), checkpoints=checkpoints,
                train_losses=[float(x) for x in losses], before=steps[before], after=steps[after], weights=stored,
                cpu_seconds=time.process_time() - c0)


def drop_checkpoints(losses: list[float]) -> tuple[int, int]:
    """Indices of the checkpoints just before and just after the loss drops.

    With ``l0`` the first loss and ``l1`` the last: *before* is the last checkpoint whose loss
    is still above ``l0 - 0.1 (l0 - l1)`` (less than a tenth of the way down), *after* the
    first checkpoint below ``l1 + 0.1 (l0 - l1)`` (nine tenths of the way down).
    """
    l0, l1 = losses[0], losses[-1]
    span = l0 - l1
    above = [i for i, x in enumerate(losses) if x > l0 - 0.1 * span]
    below = [i for i, x in enumerate(losses) if x < l1 + 0.1 * span]
    before = max(above) if above else 0
    after = min([i for i in below if i > before] or [len(losses) - 1])
    return before, after


def _run(unit):
    kind, args = unit
    if kind == "extrapolation":
        return extrapolation_run(*args)
    return induction_run(*args)


# ---- the experiment ---------------------------------------------------------------------------

def units(cfg: dict) -> list:
    """Every work unit, longest first (so two workers finish together)."""
    out = [("induction", (cfg, seed)) for seed in cfg["induction"]["seeds"]]
    out += [("extrapolation", (cfg, task, method, seed))
            for task in cfg["tasks"] for method in METHODS for seed in cfg["seeds"]]
    return out


def check(cfg: dict) -> None:
    """Refuse a configuration before any training: every task must be able to make every
    evaluation length, and every model must be a valid config."""
    from mhalib.models.tiny_tasks import make_batch

    for task, spec in cfg["tasks"].items():
        for f in cfg["eval_factors"]:
            make_batch(task, 1, f * cfg["L_train"], vocab=spec["vocab"], k=spec.get("k", 3), rng=0)
        for m in METHODS:
            _config(cfg, task, m)
    ic = cfg["induction"]
    make_batch(ic["task"], 1, cfg["L_train"], vocab=ic["vocab"], rng=0)


def run_experiment(cfg: dict, *, jobs: int = 2, progress: bool = True) -> tuple[dict, dict]:
    """Run every unit; return ``(results JSON, weights for the npz)``."""
    check(cfg)
    started = time.perf_counter()
    load_start = os.getloadavg() if hasattr(os, "getloadavg") else None
    work = units(cfg)
    bar = _progress(len(work), progress)
    results = []
    if jobs == 1:
        _worker_init()
        for u in work:
            results.append(_run(u))
            bar.update(1)
    else:
        with multiprocessing.get_context("spawn").Pool(jobs, initializer=_worker_init) as pool:
            for r in pool.imap(_run, work):
                results.append(r)
                bar.update(1)
    bar.close()
    wall = time.perf_counter() - started
    return assemble(cfg, results, wall_s=wall, jobs=jobs, load_start=load_start)


def assemble(cfg, results, *, wall_s, jobs, load_start):
    import torch

    records, training, weights, models = [], [], {}, {}
    induction = []
    for r in results:  # in the fixed order of units()
        if r["kind"] == "extrapolation":
            records += r["records"]
            training.append(r["training"])
            if r["weights"] is not None:
                key = f"{STORED_TASK}_{r['training']['method']}"
                models[key] = dict(config=r["config"], task=STORED_TASK, seed=r["training"]["seed"],
                                   step=cfg["tasks"][STORED_TASK]["steps"])
                weights.update({f"{key}/{k}": v for k, v in r["weights"].items()})
        else:
            induction.append({k: v for k, v in r.items() if k not in ("weights", "kind", "config")})
            for when, w in r["weights"].items():
                key = f"induction_{when}"
                models[key] = dict(config=r["config"], task=cfg["induction"]["task"], seed=r["seed"],
                                   step=r[when])
                weights.update({f"{key}/{k}": v for k, v in w.items()})
    ind_config = results[0]["config"] if results and results[0]["kind"] == "induction" else None
    out = dict(
        schema=SCHEMA_VERSION,
        made_by="tools/train_tiny.py" + (" --quick" if cfg is QUICK else ""),
        date=datetime.date.today().isoformat(),
        wall_time_s=round(wall_s, 1),
        cpu_time_s=round(sum(r["training"]["cpu_seconds"] if r["kind"] == "extrapolation" else r["cpu_seconds"]
                             for r in results), 1),
        machine=dict(cpu=cpu_name(), cores=os.cpu_count(), platform=platform.platform(),
                     python=platform.python_version(), torch=torch.__version__, numpy=np.__version__,
                     jobs=jobs, threads_per_job=1,
                     load_average_at_start=None if load_start is None else [round(x, 2) for x in load_start],
                     load_average_at_end=[round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None),
        config=dict(cfg, methods=list(METHODS), induction=dict(cfg["induction"], config=ind_config)),
        extrapolation=dict(records=records, training=training),
        induction=induction,
        weights=dict(file=WEIGHTS_NAME, models=models),
    )
    return out, weights


def _progress(total: int, enabled: bool):
    try:
        from tqdm import tqdm

        return tqdm(total=total, desc="tiny decoders", unit="run", disable=not enabled, file=sys.stderr)
    except ImportError:  # pragma: no cover - tqdm is in the dev environment
        class Line:
            n = 0

            def update(self, k):
                self.n += k
                if enabled:
                    print(f"\rtiny decoders: {self.n}/{total} runs", end="", file=sys.stderr, flush=True)

            def close(self):
                if enabled:
                    print(file=sys.stderr)
        return Line()


def write(out: dict, weights: dict, out_dir: Path) -> tuple[Path, Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    jpath, wpath = out_dir / JSON_NAME, out_dir / WEIGHTS_NAME
    jpath.write_text(json.dumps(out, indent=1, sort_keys=False) + "\n")
    np.savez_compressed(wpath, **{k: np.asarray(v, dtype=np.float32) for k, v in sorted(weights.items())})
    return jpath, wpath


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="a smoke configuration that runs in seconds")
    p.add_argument("--out-dir", type=Path, default=None,
                   help="where to write the JSON and npz (default figures/data; with --quick test-output/tiny_quick)")
    p.add_argument("--jobs", type=int, default=2, help="worker processes (default 2; results do not depend on it)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    a = p.parse_args(argv)
    if a.jobs < 1:
        p.error(f"--jobs must be >= 1, got {a.jobs}")
    cfg = QUICK if a.quick else FULL
    out_dir = a.out_dir or (ROOT / "test-output" / "tiny_quick" if a.quick else ROOT / "figures" / "data")
    out, weights = run_experiment(cfg, jobs=a.jobs, progress=not a.no_progress)
    jpath, wpath = write(out, weights, out_dir)
    print(f"wrote {jpath} and {wpath} ({wpath.stat().st_size / 1e6:.2f} MB) in {out['wall_time_s']:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
